package harness

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// whiskers draws min–max lines with caps at bar positions; unlike
// plotter.YErrorBars it can be shifted by a canvas offset, like grouped bars.
type whiskers struct {
	x, lo, hi []float64
	offset    vg.Length
}

func (w *whiskers) add(x float64, s Spread) {
	w.x = append(w.x, x)
	w.lo = append(w.lo, s.Min)
	w.hi = append(w.hi, s.Max)
}

// Plot implements plot.Plotter.
func (w *whiskers) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	ls := draw.LineStyle{Color: color.Black, Width: vg.Points(1)}
	capw := vg.Points(3)
	for i := range w.x {
		x := trX(w.x[i]) + w.offset
		lo, hi := trY(w.lo[i]), trY(w.hi[i])
		c.StrokeLine2(ls, x, lo, x, hi)
		c.StrokeLine2(ls, x-capw, lo, x+capw, lo)
		c.StrokeLine2(ls, x-capw, hi, x+capw, hi)
	}
}

// DataRange implements plot.DataRanger.
func (w *whiskers) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, ymin = math.Inf(1), math.Inf(1)
	xmax, ymax = math.Inf(-1), math.Inf(-1)
	for i := range w.x {
		xmin, xmax = math.Min(xmin, w.x[i]), math.Max(xmax, w.x[i])
		ymin, ymax = math.Min(ymin, w.lo[i]), math.Max(ymax, w.hi[i])
	}
	return
}

// WriteCharts renders one RPS chart per workload (median bars with min–max
// whiskers) and one chart of throughput relative to net/http, as PNG files
// in dir. It returns the file names by chart key ("rps-<workload>",
// "ratio").
func WriteCharts(res *Results, dir string) (map[string]string, error) {
	files := map[string]string{}
	for _, ws := range res.Summary {
		if ws.Tool == "idle" || mustWorkload(ws.Workload).WS == WSIdle {
			continue // no throughput: its table is the result
		}
		name := "rps-" + ws.Workload + ".png"
		if err := rpsChart(ws, filepath.Join(dir, name)); err != nil {
			return files, err
		}
		files["rps-"+ws.Workload] = name
	}
	ok, err := ratioChart(res, filepath.Join(dir, "ratio-nethttp.png"))
	if err != nil {
		return files, err
	}
	if ok {
		files["ratio"] = "ratio-nethttp.png"
	}
	return files, nil
}

func rpsChart(ws WorkloadSummary, path string) error {
	var names []string
	var vals []Spread
	for _, ss := range ws.Servers {
		names = append(names, ss.Server)
		vals = append(vals, ss.RPS)
	}
	return BarChart(path, fmt.Sprintf("%s: requests/s (median of rounds, whiskers min–max)", ws.Workload),
		"requests per second", names, vals)
}

// BarChart saves a PNG bar chart: one bar per name at the median of its
// Spread, with min–max whiskers.
func BarChart(path, title, ylabel string, names []string, vals []Spread) error {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = ylabel
	p.Y.Min = 0
	var medians plotter.Values
	w := &whiskers{}
	ymax := 1.0
	for i, v := range vals {
		medians = append(medians, v.Median)
		w.add(float64(i), v)
		ymax = math.Max(ymax, v.Max)
	}
	bars, err := plotter.NewBarChart(medians, vg.Points(28))
	if err != nil {
		return err
	}
	bars.Color = plotutil.Color(0)
	bars.LineStyle.Width = 0
	p.Add(plotter.NewGrid(), bars, w)
	p.Y.Max = 1.1 * ymax
	p.NominalX(names...)
	return p.Save(vg.Length(6+2*len(names))*vg.Centimeter, 9*vg.Centimeter, path)
}

func ratioChart(res *Results, path string) (bool, error) {
	var workloads, servers []string
	for _, ws := range res.Summary {
		if ws.Tool != "idle" && ws.Tool != "h3" && ws.Tool != "ws" { // h3: relative to quic-go, ws: to the best peer, in their tables
			workloads = append(workloads, ws.Workload)
		}
	}
	for _, sn := range res.Servers {
		if sn != Baseline {
			servers = append(servers, sn)
		}
	}
	byWorkload := map[string]WorkloadSummary{}
	for _, ws := range res.Summary {
		byWorkload[ws.Workload] = ws
	}
	return RatioChart(path, "throughput relative to net/http (median of per-round ratios, whiskers min–max)",
		"× net/http", workloads, servers, func(group, series string) Spread {
			if ss := findServer(byWorkload[group], series); ss != nil {
				return ss.VsBaseline
			}
			return Spread{}
		})
}

// RatioChart saves a PNG grouped bar chart of ratios: one group per entry
// of groups (workloads, store variants), one coloured bar per series
// (servers) at the median of ratio(group, series) with min–max whiskers,
// and a dashed line at 1. It reports whether any bar had data.
func RatioChart(path, title, ylabel string, groups, series []string, ratio func(group, series string) Spread) (bool, error) {
	if len(groups) == 0 {
		return false, nil
	}
	p := plot.New()
	p.Add(plotter.NewGrid())
	p.Title.Text = title
	p.Y.Label.Text = ylabel
	p.Y.Min = 0
	width := vg.Points(float64(64) / float64(max(len(series), 1)))
	plotted := false
	ymax := 1.0
	for i, sn := range series {
		var vals plotter.Values
		w := &whiskers{}
		for j, g := range groups {
			r := ratio(g, sn)
			vals = append(vals, r.Median)
			if r.N > 0 {
				plotted = true
				w.add(float64(j), r)
				ymax = math.Max(ymax, r.Max)
			}
		}
		bars, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return false, err
		}
		bars.Color = plotutil.Color(i)
		bars.LineStyle.Width = 0
		bars.Offset = vg.Length(float64(i)-float64(len(series)-1)/2) * width
		w.offset = bars.Offset
		p.Add(bars)
		p.Legend.Add(sn, bars)
		if len(w.x) > 0 {
			p.Add(w)
		}
	}
	one := plotter.NewFunction(func(float64) float64 { return 1 })
	one.Color = color.Gray{Y: 80}
	one.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(one)
	p.Legend.Top = true
	p.Legend.Left = true
	// Headroom above the tallest whisker for the legend.
	p.Y.Max = ymax * 1.25
	p.NominalX(groups...)
	return plotted, p.Save(vg.Length(12+3*len(groups))*vg.Centimeter, 11*vg.Centimeter, path)
}
