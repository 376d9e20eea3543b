package send

import (
	"bufio"
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"herald/bench/harness"
)

// PostgreSQL does part of herald's work in its own processes: one backend
// per connection of herald's pool. backendsOf finds them through the
// loopback sockets: herald's TCP connections to port 5432 (from its file
// descriptors and /proc/net/tcp), the server-side sockets whose peer port
// is one of those, and the processes holding them. It is used at the end
// of a run (herald opens its connections as it needs them); a backend's
// CPU time then covers its whole life, herald's start-up queries included.
func backendsOf(pid int, pgPort int) ([]int, error) {
	mine, err := socketInodes(pid)
	if err != nil {
		return nil, err
	}
	conns, err := tcpConns()
	if err != nil {
		return nil, err
	}
	clientPorts := map[int]bool{}
	for _, c := range conns {
		if mine[c.inode] && c.remotePort == pgPort {
			clientPorts[c.localPort] = true
		}
	}
	serverInodes := map[uint64]bool{}
	for _, c := range conns {
		if c.localPort == pgPort && clientPorts[c.remotePort] {
			serverInodes[c.inode] = true
		}
	}
	if len(serverInodes) == 0 {
		return nil, nil
	}
	procs, _ := filepath.Glob("/proc/[0-9]*")
	var out []int
	for _, p := range procs {
		other, err := strconv.Atoi(filepath.Base(p))
		if err != nil || other == pid {
			continue
		}
		inodes, err := socketInodes(other)
		if err != nil {
			continue
		}
		for ino := range inodes {
			if serverInodes[ino] {
				out = append(out, other)
				break
			}
		}
	}
	return out, nil
}

// cpuOf sums the CPU time of the processes.
func cpuOf(pids []int) time.Duration {
	var d time.Duration
	for _, p := range pids {
		d += harness.ProcCPU(p)
	}
	return d
}

// socketInodes are the inodes of the process's sockets.
func socketInodes(pid int) (map[uint64]bool, error) {
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return nil, err
	}
	out := map[uint64]bool{}
	for _, fd := range fds {
		link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if err != nil || !strings.HasPrefix(link, "socket:[") {
			continue
		}
		if ino, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]"), 10, 64); err == nil {
			out[ino] = true
		}
	}
	return out, nil
}

type tcpConn struct {
	localPort, remotePort int
	inode                 uint64
}

// tcpConns reads /proc/net/tcp and tcp6 (ports and inodes only).
func tcpConns() ([]tcpConn, error) {
	var out []tcpConn
	for _, name := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(name)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // header
		for sc.Scan() {
			fl := strings.Fields(sc.Text())
			if len(fl) < 10 {
				continue
			}
			lp, ok1 := hexPort(fl[1])
			rp, ok2 := hexPort(fl[2])
			ino, err := strconv.ParseUint(fl[9], 10, 64)
			if ok1 && ok2 && err == nil && ino != 0 {
				out = append(out, tcpConn{lp, rp, ino})
			}
		}
		f.Close()
	}
	return out, nil
}

// hexPort reads the port of "ADDR:PORT" in /proc/net/tcp's hexadecimal form.
func hexPort(s string) (int, bool) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return 0, false
	}
	p, err := strconv.ParseUint(s[i+1:], 16, 16)
	return int(p), err == nil
}

// pgCounters are PostgreSQL's activity counters of the benchmark's schema
// (pg_stat_user_tables and pg_stat_user_indexes): which table and index
// herald's queries read how many rows from. Keys: "table" or
// "table.index"; values: rows read (sequential scans, index entries).
type pgCounters map[string]int64

// pgDead is a table's dead rows (n_dead_tup), reported beside the counters.
type pgDead map[string]int64

func readPGCounters(ctx context.Context, db *sql.DB) (pgCounters, pgDead, error) {
	c, dead := pgCounters{}, pgDead{}
	rows, err := db.QueryContext(ctx, `SELECT relname, COALESCE(seq_tup_read, 0), n_dead_tup
		FROM pg_stat_user_tables WHERE schemaname = current_schema()`)
	if err != nil {
		return nil, nil, err
	}
	for rows.Next() {
		var rel string
		var seq, deadRows int64
		if err := rows.Scan(&rel, &seq, &deadRows); err != nil {
			rows.Close()
			return nil, nil, err
		}
		c[rel+" (sequential)"] = seq
		dead[rel] = deadRows
	}
	rows.Close()
	rows, err = db.QueryContext(ctx, `SELECT relname, indexrelname, COALESCE(idx_tup_read, 0)
		FROM pg_stat_user_indexes WHERE schemaname = current_schema()`)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var rel, idx string
		var n int64
		if err := rows.Scan(&rel, &idx, &n); err != nil {
			return nil, nil, err
		}
		c[rel+"."+idx] = n
	}
	return c, dead, rows.Err()
}

// top is the n largest increases from before to c, formatted.
func (c pgCounters) top(before pgCounters, n int) string {
	type kv struct {
		k string
		v int64
	}
	var d []kv
	for k, v := range c {
		if v-before[k] > 0 {
			d = append(d, kv{k, v - before[k]})
		}
	}
	slices.SortFunc(d, func(a, b kv) int { return cmp.Compare(b.v, a.v) })
	var out []string
	for i := 0; i < len(d) && i < n; i++ {
		out = append(out, fmt.Sprintf("%s %s", d[i].k, harness.Thousands(float64(d[i].v))))
	}
	return strings.Join(out, ", ")
}
