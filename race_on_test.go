//go:build race

package riptide

const raceEnabled = true
