// Package static holds the console's CSS, scripts and images, embedded in
// the binary. Vendored files keep their version in their name.
package static

import "embed"

// FS holds every file of this folder but this one.
//
//go:embed css js vendor img
var FS embed.FS
