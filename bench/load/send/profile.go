package send

import (
	"context"
	"debug/buildinfo"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// profileHook is added to herald's main package by `go build -overlay` for
// -cpuprofile only; the tree is not changed. With HERALD_BENCH_PROFILE_ADDR
// set it serves, on that side address: /start?file=F (a CPU profile into F,
// and a note of the memory statistics) and /stop (ends the profile, writes
// a heap profile into F.heap, answers the GC and allocation counts since
// /start as JSON).
const profileHook = `package main

import (
	"encoding/json"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
)

func init() {
	addr := os.Getenv("HERALD_BENCH_PROFILE_ADDR")
	if addr == "" {
		return
	}
	var mu sync.Mutex
	var file string
	var f *os.File
	var before runtime.MemStats
	mux := http.NewServeMux()
	mux.HandleFunc("/start", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		file = r.URL.Query().Get("file")
		var err error
		if f, err = os.Create(file); err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		runtime.ReadMemStats(&before)
	})
	mux.HandleFunc("/stop", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		pprof.StopCPUProfile()
		f.Close()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		if h, err := os.Create(file + ".heap"); err == nil {
			_ = pprof.Lookup("heap").WriteTo(h, 0)
			h.Close()
		}
		_ = json.NewEncoder(w).Encode(map[string]any{
			"gc": after.NumGC - before.NumGC, "pause_ns": after.PauseTotalNs - before.PauseTotalNs,
			"alloc_bytes": after.TotalAlloc - before.TotalAlloc, "mallocs": after.Mallocs - before.Mallocs,
			"heap_inuse": after.HeapInuse, "sys": after.Sys,
		})
	})
	go http.ListenAndServe(addr, mux)
}
`

// buildHerald builds herald from the working tree into dir, with the
// replacements of the overlay file (go build -overlay's JSON; "" for none)
// and, with hook, profileHook added, and the build tags of like (the
// binary given with -herald: an OpenSSL build stays one, or the profile
// would time Go's RSA instead). It returns the binary's path.
func buildHerald(ctx context.Context, dir, overlayFile string, hook bool, like string) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(out)))
	replace := map[string]string{}
	if overlayFile != "" {
		b, err := os.ReadFile(overlayFile)
		if err != nil {
			return "", err
		}
		var ov struct{ Replace map[string]string }
		if err := json.Unmarshal(b, &ov); err != nil {
			return "", fmt.Errorf("-overlay %s: %w", overlayFile, err)
		}
		replace = ov.Replace
	}
	if hook {
		f := filepath.Join(dir, "zz_benchprofile.go")
		if err := os.WriteFile(f, []byte(profileHook), 0o644); err != nil {
			return "", err
		}
		replace[filepath.Join(root, "cmd", "herald", "zz_benchprofile.go")] = f
	}
	overlay, err := json.Marshal(map[string]any{"Replace": replace})
	if err != nil {
		return "", err
	}
	ov := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(ov, overlay, 0o644); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "herald-bench")
	args := []string{"build", "-overlay", ov, "-o", bin}
	if tags := buildTags(like); tags != "" {
		args = append(args, "-tags", tags)
	}
	cmd := exec.CommandContext(ctx, "go", append(args, "./cmd/herald")...)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build herald with the overlay: %v: %s", err, b)
	}
	return bin, nil
}

// profiler talks to profileHook in a running herald.
type profiler struct{ addr string }

func (p *profiler) start(file string) error {
	resp, err := http.Get("http://" + p.addr + "/start?file=" + url.QueryEscape(file))
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("profile start: %s", resp.Status)
	}
	return nil
}

// gcStats is what /stop answers.
type gcStats struct {
	GC         uint32 `json:"gc"`
	PauseNS    uint64 `json:"pause_ns"`
	AllocBytes uint64 `json:"alloc_bytes"`
	Mallocs    uint64 `json:"mallocs"`
	HeapInuse  uint64 `json:"heap_inuse"`
	Sys        uint64 `json:"sys"`
}

func (p *profiler) stop() (gcStats, error) {
	var st gcStats
	c := &http.Client{Timeout: 30 * time.Second}
	resp, err := c.Get("http://" + p.addr + "/stop")
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	return st, json.NewDecoder(resp.Body).Decode(&st)
}

// buildTags are the -tags a Go binary was built with ("" for none, or
// when it cannot be read).
func buildTags(bin string) string {
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		return ""
	}
	for _, s := range info.Settings {
		if s.Key == "-tags" {
			return s.Value
		}
	}
	return ""
}
