//go:build race

package main

// raceEnabled is true when the tests run under the race detector, which
// makes each of the hundreds of nash processes the end-to-end tests start
// several times slower.
const raceEnabled = true
