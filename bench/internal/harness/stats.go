package harness

import (
	"math"
	"sort"
)

// Spread is the median of a sample with its extremes.
type Spread struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	N      int     `json:"n"`
}

// SpreadPct is (max-min)/median in percent, or NaN when undefined.
func (s Spread) SpreadPct() float64 {
	if s.N == 0 || s.Median == 0 {
		return math.NaN()
	}
	return (s.Max - s.Min) / s.Median * 100
}

// SpreadOf summarises xs; the zero Spread when xs is empty.
func SpreadOf(xs []float64) Spread {
	if len(xs) == 0 {
		return Spread{}
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return Spread{Median: median(s), Min: s[0], Max: s[len(s)-1], N: len(s)}
}

// median of a sorted, non-empty slice; the mean of the middle two for even
// lengths.
func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// roundRatios returns, for every round in which both server and ref have a
// clean run, rps(server)/rps(ref).
func roundRatios(runs []RunRecord, workload, server, ref string) []float64 {
	return RoundRatios(runs, server, ref, func(r RunRecord) (string, int, bool, float64) {
		return r.Server, r.Round, r.Workload == workload && !r.Flagged, r.RPS
	})
}

// RoundRatios returns, for every round in which both server and ref have a
// clean run with a positive value, value(server)/value(ref). desc tells a
// run's server, round, whether it counts (clean, and of the workload or
// variant in question) and its value.
func RoundRatios[R any](runs []R, server, ref string, desc func(R) (server string, round int, ok bool, v float64)) []float64 {
	refV := map[int]float64{}
	for _, r := range runs {
		if sn, round, ok, v := desc(r); ok && sn == ref && v > 0 {
			refV[round] = v
		}
	}
	var out []float64
	for _, r := range runs {
		if sn, round, ok, v := desc(r); ok && sn == server {
			if b, found := refV[round]; found {
				out = append(out, v/b)
			}
		}
	}
	return out
}
