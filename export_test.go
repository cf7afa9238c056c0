package riptide

// RaceEnabled tells the external tests whether -race is on (RSS figures
// mean nothing under it).
const RaceEnabled = raceEnabled
