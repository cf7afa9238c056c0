package israce

import (
	"runtime/debug"
	"testing"
)

// Enabled agrees with the build settings the binary was made with.
func TestEnabled(t *testing.T) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		t.Skip("no build info")
	}
	race := false
	for _, s := range bi.Settings {
		if s.Key == "-race" && s.Value == "true" {
			race = true
		}
	}
	if Enabled != race {
		t.Errorf("Enabled = %v, build info says -race=%v", Enabled, race)
	}
}
