// Package harness holds the helpers the benchmark programs under bench/
// share: starting and stopping processes, a fresh database per run, an
// account to call the API with, and a few facts about the machine.
package harness

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// --- processes ---

// Proc is a process started by Start, logging to a file.
type Proc struct {
	name string
	Cmd  *exec.Cmd
	done chan struct{}
	log  string
}

// Start runs bin and waits until ready answers 200. The log is appended to.
func Start(ctx context.Context, name, bin string, args, env []string, logPath, ready string) (*Proc, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &Proc{name: name, Cmd: cmd, done: make(chan struct{}), log: logPath}
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		select {
		case <-p.done:
			return nil, fmt.Errorf("%s exited before it was ready: %s", name, p.Tail())
		case <-ctx.Done():
			p.Stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		resp, err := http.Get(ready)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		if time.Now().After(deadline) {
			p.Stop()
			return nil, fmt.Errorf("%s not ready at %s after 20 s: %s", name, ready, p.Tail())
		}
	}
}

// Stop asks the process to end (SIGTERM) and kills it after 10 s.
func (p *Proc) Stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.Cmd.Process.Kill()
		<-p.done
	}
}

// Child is this benchmark program re-executed as a helper process (the
// loopback SMTP sinks): it prints "addr HOST:PORT" once listening, answers
// each command line on its stdin with one line, and exits at the end of
// its stdin.
type Child struct {
	Cmd  *exec.Cmd
	Addr string
	in   io.WriteCloser
	out  *bufio.Reader
	mu   sync.Mutex // one command and its answer at a time
}

// StartChild runs this program with args and waits for its "addr" line.
func StartChild(args ...string) (*Child, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, args...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &Child{Cmd: cmd, in: in, out: bufio.NewReader(out)}
	line, err := c.out.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "addr ") {
		c.Stop()
		return nil, fmt.Errorf("%s did not start (%q, %v)", strings.Join(args, " "), line, err)
	}
	c.Addr = strings.TrimSpace(strings.TrimPrefix(line, "addr "))
	return c, nil
}

// Ask sends one command line and returns the answer line; callers from
// several goroutines take turns.
func (c *Child) Ask(command string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := io.WriteString(c.in, command+"\n"); err != nil {
		return "", err
	}
	return c.out.ReadString('\n')
}

// Stop closes the child's stdin, which ends it, and kills it if it lingers.
func (c *Child) Stop() {
	c.in.Close()
	done := make(chan error, 1)
	go func() { done <- c.Cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = c.Cmd.Process.Kill()
		<-done
	}
}

// SelfCPU is this process's user plus system time.
func SelfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Tail is the last 2000 bytes of the process's log, trimmed.
func (p *Proc) Tail() string {
	b, _ := os.ReadFile(p.log)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return strings.TrimSpace(string(b))
}

// --- database, network, account ---

// FreshSchema makes an empty schema on the PostgreSQL server of base and
// returns base with its search_path set to it, and a function dropping it.
func FreshSchema(base string) (string, func(), error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", nil, fmt.Errorf("HERALD_BENCH_DATABASE: %w", err)
	}
	admin, err := OpenSQL(base)
	if err != nil {
		return "", nil, fmt.Errorf("HERALD_BENCH_DATABASE: %w", err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "bench_" + hex.EncodeToString(b)
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		admin.Close()
		return "", nil, fmt.Errorf("HERALD_BENCH_DATABASE: create schema: %w", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	drop := func() {
		_, _ = admin.Exec("DROP SCHEMA " + schema + " CASCADE")
		admin.Close()
	}
	return u.String(), drop, nil
}

// OpenSQL opens the database at dsn (a postgres:// URL or an SQLite file)
// for the benchmarks' own few statements: making and dropping a schema,
// and reading counters to check or report what herald did. Herald's data
// is only ever written by herald (through its API and SMTP), but for one
// statement of `load automation -branch`, which makes a branch's hour
// pass (a process's clock cannot be moved from outside).
func OpenSQL(dsn string) (*sql.DB, error) {
	var d gorm.Dialector
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		d = postgres.Open(dsn)
	} else {
		d = sqlite.Open("file:" + dsn + "?_busy_timeout=10000")
	}
	g, err := gorm.Open(d, &gorm.Config{Logger: logger.Discard})
	if err != nil {
		return nil, err
	}
	return g.DB()
}

// FreeAddr returns a loopback address with a port free right now.
func FreeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// AccountKeys is what `herald account create` prints.
type AccountKeys struct {
	UserID    int64  `json:"user_id"`
	PublicKey string `json:"public_key"`
	SecretKey string `json:"secret_key"`
}

// CreateAccount runs `herald account create` (which also migrates).
func CreateAccount(ctx context.Context, bin string, env []string, email string) (AccountKeys, error) {
	var keys AccountKeys
	cmd := exec.CommandContext(ctx, bin, "account", "create", "--email", email, "--password", "bench-password-1", "--name", "Bench")
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return keys, fmt.Errorf("herald account create: %v: %s", err, stderr.String())
	}
	if err := json.Unmarshal(out, &keys); err != nil || keys.PublicKey == "" || keys.SecretKey == "" {
		return keys, fmt.Errorf("herald account create printed %q", out)
	}
	return keys, nil
}

// --- another process's CPU time and memory ---

// ProcCPU is the CPU time (user + system) of the process so far, from
// /proc/<pid>/stat (clock ticks of 1/100 s, Linux's USER_HZ); 0 when it
// cannot be read.
func ProcCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:])) // f[0] is field 3 (state)
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64) // field 14
	stime, _ := strconv.ParseInt(f[12], 10, 64) // field 15
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// ProcMem reads VmRSS and VmHWM (peak RSS), in bytes, from
// /proc/<pid>/status.
func ProcMem(pid int) (rss, hwm int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || (k != "VmRSS" && k != "VmHWM") {
			continue
		}
		f := strings.Fields(v) // "12345 kB"
		if len(f) == 0 {
			continue
		}
		n, _ := strconv.ParseInt(f[0], 10, 64)
		if k == "VmRSS" {
			rss = n << 10
		} else {
			hwm = n << 10
		}
	}
	return rss, hwm, nil
}

// --- numbers and the machine ---

// Median is the median of xs, 0 for none.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Thousands formats v rounded to an integer as 123,456.
func Thousands(v float64) string {
	s := strconv.FormatInt(int64(v+0.5), 10)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// LoadAvg is the first three fields of /proc/loadavg.
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// MemTotal is MemTotal of /proc/meminfo, in GiB.
func MemTotal() string {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return "unknown memory"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && k == "MemTotal" {
			f := strings.Fields(v)
			if len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return fmt.Sprintf("%.0f GiB RAM", float64(n)/(1<<20))
			}
		}
	}
	return "unknown memory"
}

// CPUModel is the first "model name" of /proc/cpuinfo.
func CPUModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}
