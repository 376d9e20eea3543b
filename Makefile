# Herald: `make run` serves on :8080 with an SQLite file; `make test` runs every test.
GO      ?= go
BIN     := bin/herald
PKGS    := ./...

# go.mod names the toolchain (go1.26.10, with the standard library's
# security fixes); a machine whose default is GOTOOLCHAIN=local fetches it
# through the module proxy.
GOTOOLCHAIN ?= auto
export GOTOOLCHAIN

.PHONY: build run test generate bench bench-build bench-audience bench-import bench-mail bench-send bench-automation bench-automation-branch bench-inbound bench-events bench-scaleout bench-memory bench-relays vet vulncheck fuzz fmt clean

# RSA for DKIM (docs/BENCHMARKS.md, the DKIM rows): herald is built with
# -tags openssl wherever the system's OpenSSL can be linked (libssl-dev's
# headers and libcrypto, through cgo), so that RSA signatures are made by
# libcrypto, about 3.5x faster than crypto/rsa here; elsewhere it falls back
# to Go's crypto/rsa and says so. OPENSSL=1 insists (the build fails without
# libssl-dev), OPENSSL=0 builds without. BORING=1 builds with the
# toolchain's GOEXPERIMENT=boringcrypto (measured barely faster: not worth it).
ifeq ($(origin OPENSSL),undefined)
OPENSSL := $(shell printf '\043include <openssl/evp.h>\nint main(void){return EVP_PKEY_sign_init(0);}\n' | \
	$${CC:-cc} -x c - -lcrypto -o /dev/null >/dev/null 2>&1 && [ "$$($(GO) env CGO_ENABLED)" = 1 ] && echo 1 || echo 0)
ifneq ($(OPENSSL),1)
$(info herald: OpenSSL's libcrypto cannot be linked here (apt-get install libssl-dev gcc): DKIM signs with Go's crypto/rsa, about 3.5x slower)
endif
endif
ifeq ($(OPENSSL),1)
HERALD_BUILD_FLAGS += -tags openssl
endif
ifeq ($(BORING),1)
export GOEXPERIMENT := boringcrypto
export CGO_ENABLED := 1
endif

build:
	$(GO) build $(HERALD_BUILD_FLAGS) -o $(BIN) ./cmd/herald

run: build
	./$(BIN) serve

# Without the race detector by default (several times faster); RACE=1 adds
# -race (CI always sets it). HERALD_TEST_DATABASE=postgres://… runs the
# database tests on PostgreSQL, HERALD_TEST_STRICT=1 fails instead of
# skipping when Chromium or PostgreSQL is missing. The timeout is per
# package: cmd/herald's Chromium flows take longest, most under -race.
ifeq ($(RACE),1)
TEST_RACE := -race
endif

test:
	$(GO) test $(TEST_RACE) -count=1 -timeout 45m $(PKGS)

# Benchmarks (docs/BENCHMARKS.md). One load driver, bin/load (bench/load),
# starts bin/herald and drives it only through its API, its command line
# and SMTP; `bin/load COMMAND -h` lists a command's flags. `make bench`
# runs the API lists beside a bare Fiber handler under wrk, the audience,
# mail and send benchmarks, then the Go micro-benchmarks of the packages.
# HERALD_BENCH_DATABASE=postgres://… runs herald on PostgreSQL (a fresh
# schema per run). BENCH_FLAGS: -rounds 3 -duration 10s -warmup 3s -c 64
# -t 2 -calibrate=false.
BENCH_FLAGS ?=
LOAD := bin/load

bench-build:
	$(GO) build $(HERALD_BUILD_FLAGS) -o $(BIN) ./cmd/herald
	$(GO) build -o $(LOAD) ./bench/load

bench: bench-build
	@command -v wrk >/dev/null 2>&1 || { echo "make bench needs wrk (HTTP load generator): install the wrk package with the system package manager (Debian, Ubuntu, Fedora: package wrk; macOS: brew install wrk) and run make bench again" >&2; exit 1; }
	$(LOAD) api -herald $(BIN) $(BENCH_FLAGS)
	$(LOAD) audience -herald $(BIN) $(BENCH_AUDIENCE_FLAGS)
	$(GO) run ./bench/mail $(BENCH_MAIL_FLAGS)
	$(LOAD) send -herald $(BIN) $(BENCH_SEND_FLAGS)
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

# Audience: a 1,000,000-row CSV imported through the API (rows/s, herald's
# peak RSS), a three-condition segment over it, and contacts/list of
# 100,000 contacts. BENCH_AUDIENCE_FLAGS: -rows 1000000 -import-runs 3
# -list-rows 100000 -list-runs 3.
BENCH_AUDIENCE_FLAGS ?=

bench-audience: bench-build
	$(LOAD) audience -herald $(BIN) $(BENCH_AUDIENCE_FLAGS)

# Import against raw: 100,000 rows through the service beside a raw insert
# of the same rows into the same table, alternating over 3 rounds
# (BenchmarkImportRatio, also part of make bench's Go benchmarks); fails
# when SQLite's median ratio (CPU per row, raw ÷ import) is below
# importRatioFloor (0.5).
# HERALD_IMPORT_ROWS, HERALD_IMPORT_ROUNDS; HERALD_TEST_DATABASE=postgres://…
# runs it on PostgreSQL (reported, no floor).
bench-import:
	$(GO) test -run '^$$' -bench BenchmarkImportRatio -benchtime 1x ./service/audience/

# Mail: messages built and DKIM-signed per second from a 20 KB template,
# and the SMTP pool against a plain go-smtp client into a loopback sink run
# as a second process. BENCH_MAIL_FLAGS: -n 20000 -build-rounds 3
# -workers N -rounds 3 -duration 5s -warmup 1s -c 10 -small -skip-build
# -skip-smtp
BENCH_MAIL_FLAGS ?=

bench-mail:
	$(GO) run ./bench/mail $(BENCH_MAIL_FLAGS)

# Sending: one single send of a library design to 100,000 contacts into a
# loopback SMTP sink run as its own process, from the API call to the last
# message accepted, beside a plain go-smtp client's ceiling in alternating
# runs; herald's CPU per message and peak RSS. BENCH_SEND_FLAGS: -contacts
# 100000 -conns 10 -runs 3 -ceilings plain+RSET,plain -ceiling-messages N
# -template 2 -dkim -cpuprofile DIR -overlay FILE.
BENCH_SEND_FLAGS ?=

bench-send: bench-build
	$(LOAD) send -herald $(BIN) $(BENCH_SEND_FLAGS)

bench-automation: bench-build
	$(LOAD) automation -herald $(BIN) $(BENCH_AUTOMATION_FLAGS)

# Automations across kill -9 (bench/load/send/branch.go): the contacts
# through a two-branch automation (Welcome, a branch, Thanks on path a,
# Nudge on path b) while one of -procs heralds is killed (SIGKILL) every
# -kill-every and restarted; a share (-openers) opens or clicks Welcome as
# people and takes path a early, the driver makes the branch's hour pass
# for the others; checks each address's emails, the duplicates against
# the in-flight bound, every enrolment done. With HERALD_BENCH_DATABASE=
# postgres://… 3 processes, else one on SQLite. BENCH_BRANCH_FLAGS:
# -contacts 100000 -procs 3 -kill-every 5s -openers 0.3.
BENCH_BRANCH_FLAGS ?=

bench-automation-branch: bench-build
	$(LOAD) automation -branch -herald $(BIN) $(BENCH_BRANCH_FLAGS)

# Inbound bounce reports: 10,000 DSNs posted to herald's inbound SMTP
# server, one per message of a completed send.
bench-inbound: bench-build
	$(LOAD) inbound -herald $(BIN) -contacts 10000 -conns 4 $(BENCH_INBOUND_FLAGS)

# The send benchmark with an events webhook endpoint on a loopback receiver.
bench-events: bench-build
	$(LOAD) events -herald $(BIN) $(BENCH_EVENTS_FLAGS)

# Scale-out (decisions.md 9): -procs herald processes on one PostgreSQL
# database share one single send while one is killed (SIGKILL) every
# -kill-every; checks every address, duplicates, counters. Needs
# HERALD_BENCH_DATABASE=postgres://…. BENCH_SCALEOUT_FLAGS: -contacts
# 1000000 -procs 3 -kill-every 5s -reference=false.
BENCH_SCALEOUT_FLAGS ?= -contacts 100000

bench-scaleout: bench-build
	$(LOAD) scaleout -herald $(BIN) $(BENCH_SCALEOUT_FLAGS)

# Memory at scale: herald's peak RSS through a large send and a
# 10,000,000-contact CSV import. BENCH_MEMORY_FLAGS: -contacts 1000000
# -import-rows 10000000 -skip-send.
BENCH_MEMORY_FLAGS ?= -contacts 1000000

bench-memory: bench-build
	$(LOAD) memory -herald $(BIN) $(BENCH_MEMORY_FLAGS)

# Several relays (decisions.md 11): one single send over two relays of
# weight 1 (two loopback sinks, two ports) against one relay, alternating
# in each round, then the failover when relay a fails during a send over
# both (close: listener closed and connections dropped; 421: it answers
# 421) and its return; checks every address once across both sinks.
# BENCH_RELAYS_FLAGS: -contacts 50000 -rounds 2 -variants 1,2,2h,1n
# -failover close,421 -down-at 0.25 -down-for 3s -retry-backoff 5s.
BENCH_RELAYS_FLAGS ?=

bench-relays: bench-build
	$(LOAD) relays -herald $(BIN) $(BENCH_RELAYS_FLAGS)

generate:
	$(GO) tool templ generate

vet:
	$(GO) vet $(PKGS)

# The fuzz test of the whole /api/ surface (docs/SECURITY.md): FUZZTIME=20m.
# Its seed corpus runs in every make test.
FUZZTIME ?= 20m

fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzAPI$$' -fuzztime $(FUZZTIME) -parallel 1 ./cmd/herald

# govulncheck; fails on a vulnerability the code reaches (.ci/vulncheck).
vulncheck:
	.ci/vulncheck

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin
