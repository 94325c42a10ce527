// Package shell is the interactive nash (bubbletea) and its plain line mode.
// It is the only package that imports bubbletea and lipgloss.
package shell
