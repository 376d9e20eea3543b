//go:build ignore

// Thumbs renders every design of the template library in headless Chromium
// with templates.SampleValues in place of its placeholders and saves a
// 300 px wide PNG of the top of each (the page laid out 600 px wide, captured
// at a device scale factor of 0.5) to static/img/templates/<preview_image>.
//
// Run it from the module root after changing a design:
//
//	go run ./templates/thumbs/main.go            # every design
//	go run ./templates/thumbs/main.go 3 4        # only ids 3 and 4
//	go run ./templates/thumbs/main.go -mobile DIR  # also full-page 320 px shots into DIR, for review
//
// CHROMIUM names the browser binary (default /usr/lib/chromium/chromium).
// A design that makes the browser fetch anything (a stylesheet, an image, a
// font) is an error: library designs must be self-contained.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"image/png"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"time"

	"github.com/chromedp/chromedp"

	"herald/templates"
)

var placeholder = regexp.MustCompile(`\(\(([A-Za-z0-9_]+)\)\)`)

func main() {
	log.SetFlags(0)
	mobile := flag.String("mobile", "", "also save full-page screenshots at 320 px into this folder")
	flag.Parse()
	if err := run(*mobile, flag.Args()); err != nil {
		log.Fatal(err)
	}
}

// run makes the thumbnails of the designs whose ids are given (all when
// none are), and 320 px review shots into mobile when it is set.
func run(mobile string, ids []string) error {
	designs, err := templates.Library()
	if err != nil {
		return err
	}
	sample := templates.SampleValues()
	only := map[int64]bool{}
	for _, a := range ids {
		id, err := strconv.ParseInt(a, 10, 64)
		if err != nil {
			return fmt.Errorf("argument %q: not a design id", a)
		}
		only[id] = true
	}

	chromium := os.Getenv("CHROMIUM")
	if chromium == "" {
		chromium = "/usr/lib/chromium/chromium"
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromium),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.WindowSize(600, 900),
	)
	defer cancelAlloc()
	browser, cancelBrowser := chromedp.NewContext(allocCtx)
	defer cancelBrowser()
	// Start the browser on its own context: the first action allocates it,
	// and a timeout context used for that would stop it on cancel.
	if err := chromedp.Do(browser, chromedp.Navigate("about:blank")); err != nil {
		return fmt.Errorf("start chromium: %w", err)
	}

	tmp, err := os.MkdirTemp("", "herald-thumbs-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	outDir := filepath.Join("static", "img", "templates")
	if _, err := os.Stat(outDir); err != nil {
		return fmt.Errorf("run from the module root: %w", err)
	}

	for _, e := range designs {
		if len(only) > 0 && !only[e.ID] {
			continue
		}
		page := placeholder.ReplaceAllStringFunc(e.HTML, func(m string) string {
			return sample[m[2:len(m)-2]]
		})
		file, err := filepath.Abs(filepath.Join(tmp, e.File))
		if err != nil {
			return err
		}
		if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
			return err
		}

		shot, err := capture(browser, "file://"+file, 600, 900, 0.5, false)
		if err != nil {
			return fmt.Errorf("%s: %w", e.File, err)
		}
		shot, err = recompress(shot)
		if err != nil {
			return fmt.Errorf("%s: %w", e.File, err)
		}
		out := filepath.Join(outDir, e.PreviewImage)
		if err := os.WriteFile(out, shot, 0o644); err != nil {
			return err
		}
		fmt.Printf("%s\t%d bytes\n", out, len(shot))

		if mobile != "" {
			shot, err := capture(browser, "file://"+file, 320, 640, 1, true)
			if err != nil {
				return fmt.Errorf("%s at 320 px: %w", e.File, err)
			}
			if err := os.MkdirAll(mobile, 0o755); err != nil {
				return err
			}
			name := filepath.Join(mobile, fmt.Sprintf("%02d-320.png", e.ID))
			if err := os.WriteFile(name, shot, 0o644); err != nil {
				return err
			}
			fmt.Printf("%s\t320 px, full page\n", name)
		}
	}
	return nil
}

// capture loads url in a viewport of width x height CSS pixels at the given
// device scale factor and returns a PNG of the viewport, or of the whole page
// when full is set. It fails when the page requested any resource.
func capture(browser context.Context, url string, width, height int64, scale float64, full bool) ([]byte, error) {
	ctx, cancel := context.WithTimeout(browser, 30*time.Second)
	defer cancel()
	err := chromedp.Do(ctx,
		chromedp.EmulateViewport(width, height, chromedp.EmulateScale(scale)),
		chromedp.Navigate(url),
		chromedp.WaitReady(chromedp.CSS("body")),
	)
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	fetched, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](
		`performance.getEntriesByType("resource").map(e => e.name)`))
	if err != nil {
		return nil, fmt.Errorf("list fetched resources: %w", err)
	}
	if len(fetched) > 0 {
		return nil, fmt.Errorf("the design fetched %v; library designs must be self-contained", fetched)
	}
	if full {
		return chromedp.Run(ctx, chromedp.FullScreenshot(100))
	}
	return chromedp.Run(ctx, chromedp.CaptureScreenshot())
}

// recompress re-encodes a PNG at the best compression Go's encoder has
// (Chromium favours speed over size); Go writes an opaque image as RGB.
func recompress(b []byte) ([]byte, error) {
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(&out, img); err != nil {
		return nil, err
	}
	if out.Len() > len(b) {
		return b, nil
	}
	return out.Bytes(), nil
}
