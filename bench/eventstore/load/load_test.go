package load

import "testing"

func TestPercentile(t *testing.T) {
	xs := make([]float64, 100)
	for i := range xs {
		xs[i] = float64(100 - i) // unsorted on purpose
	}
	for _, tc := range []struct{ p, want float64 }{{50, 50}, {99, 99}, {100, 100}, {1, 1}} {
		if got := percentile(xs, tc.p); got != tc.want {
			t.Errorf("p%.0f = %v, want %v", tc.p, got, tc.want)
		}
	}
	if got := percentile(nil, 99); got != 0 {
		t.Errorf("p99 of nothing = %v, want 0", got)
	}
}

func TestStreamNamesSpreadOverCategories(t *testing.T) {
	seen := map[string]bool{}
	for i := range 3 * Categories {
		seen[StreamName(i)[:2]] = true
	}
	if len(seen) != Categories {
		t.Errorf("%d categories used, want %d", len(seen), Categories)
	}
}
