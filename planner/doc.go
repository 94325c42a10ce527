// Package planner turns a request in natural language into an Artifact: a
// short script and its explanation, for a person to review. It never runs
// anything. It is the only package that imports langchaingo.
package planner
