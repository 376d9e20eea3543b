package views

import "strconv"

// NiceStep is a round step (1, 2 or 5 times a power of ten) that splits
// 0..top into at most four intervals: the y axis of the server-drawn
// charts.
func NiceStep(top int64) int64 {
	if top <= 4 {
		return 1
	}
	raw := (top + 3) / 4
	for p := int64(1); ; p *= 10 {
		for _, m := range []int64{1, 2, 5} {
			if m*p >= raw {
				return m * p
			}
		}
	}
}

// Coord formats an SVG coordinate with at most one decimal.
func Coord(f float64) string {
	return strconv.FormatFloat(float64(int64(f*10+0.5))/10, 'f', -1, 64)
}
