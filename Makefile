# Herald: `make run` serves on :8080 with an SQLite file; `make test` runs every test.
GO      ?= go
BIN     := bin/herald
PKGS    := ./...

# go.mod names the toolchain (go1.26.10, with the standard library's
# security fixes); a machine whose default is GOTOOLCHAIN=local fetches it
# through the module proxy.
GOTOOLCHAIN ?= auto
export GOTOOLCHAIN

.PHONY: build run test generate bench bench-audience bench-mail bench-send bench-automation bench-inbound vet vulncheck fuzz fmt clean

# RSA for DKIM (docs/BENCHMARKS.md, "DKIM signing"): OPENSSL=1 builds herald
# with -tags openssl, so that RSA signatures are made by the system's
# OpenSSL libcrypto (cgo; needs libssl-dev to build, libcrypto at run time),
# about 3.5x faster than crypto/rsa here; BORING=1 builds with the
# toolchain's GOEXPERIMENT=boringcrypto (measured barely faster: not worth it).
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

# -race always; set HERALD_TEST_DATABASE=postgres://… to run the database
# tests on PostgreSQL, HERALD_TEST_STRICT=1 to fail instead of skipping
# when Chromium or PostgreSQL is missing.
test:
	$(GO) test -race -count=1 -timeout 20m $(PKGS)

# Benchmarks (docs/BENCHMARKS.md): herald's list endpoints beside a bare
# Fiber handler under wrk over loopback, then the Go micro-benchmarks.
# BENCH_FLAGS: -rounds 3 -duration 10s -warmup 3s -c 64 -t 2 -calibrate=false;
# HERALD_BENCH_DATABASE=postgres://… runs herald on PostgreSQL.
BENCH_FLAGS ?=

bench:
	$(GO) build -o $(BIN) ./cmd/herald
	$(GO) build -o bin/bare ./bench/bare
	@command -v wrk >/dev/null 2>&1 || { echo "installing wrk"; apt-get update -o DPkg::Lock::Timeout=600 >/dev/null && apt-get install -y -o DPkg::Lock::Timeout=600 wrk >/dev/null; }
	$(GO) run ./bench/api -herald $(BIN) -bare bin/bare $(BENCH_FLAGS)
	$(GO) run ./bench/audience -herald $(BIN) $(BENCH_AUDIENCE_FLAGS)
	$(GO) run ./bench/mail $(BENCH_MAIL_FLAGS)
	$(GO) run ./bench/send -herald $(BIN) $(BENCH_SEND_FLAGS)
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

# Audience benchmark (docs/BENCHMARKS.md): a 1,000,000-row CSV imported
# through the API (rows/s, herald's peak RSS), a three-condition segment
# over it, and contacts/list of 100,000 contacts (first byte, whole answer,
# memory). BENCH_AUDIENCE_FLAGS: -rows 1000000 -import-runs 3
# -list-rows 100000 -list-runs 3; HERALD_BENCH_DATABASE=postgres://… runs
# herald on PostgreSQL.
BENCH_AUDIENCE_FLAGS ?=

bench-audience:
	$(GO) build -o $(BIN) ./cmd/herald
	$(GO) run ./bench/audience -herald $(BIN) $(BENCH_AUDIENCE_FLAGS)

# Mail benchmark (docs/BENCHMARKS.md): messages built and DKIM-signed per
# second from a 20 KB template, and the SMTP pool against a plain go-smtp
# client into a loopback sink run as a second process. BENCH_MAIL_FLAGS:
# -n 20000 -build-rounds 3 -workers N -rounds 3 -duration 5s -warmup 1s
# -c 10 -small -skip-build -skip-smtp
BENCH_MAIL_FLAGS ?=

bench-mail:
	$(GO) run ./bench/mail $(BENCH_MAIL_FLAGS)

# Sending benchmark (docs/BENCHMARKS.md): one single send of a library
# design to 100,000 contacts through herald's engine into a loopback SMTP
# sink run as a second process, from the API call to the last message
# accepted, beside a plain go-smtp client's ceiling in alternating runs;
# herald's CPU per message and peak RSS. BENCH_SEND_FLAGS: -contacts 100000
# -conns 10 -runs 3 -ceilings plain+RSET,plain -ceiling-messages N
# -template 2 -dkim -cpuprofile DIR -overlay FILE; HERALD_BENCH_DATABASE=
# postgres://… runs herald on PostgreSQL.
BENCH_SEND_FLAGS ?=

bench-send:
	$(GO) build $(HERALD_BUILD_FLAGS) -o $(BIN) ./cmd/herald
	$(GO) run ./bench/send -herald $(BIN) $(BENCH_SEND_FLAGS)

bench-automation:
	$(GO) build -o $(BIN) ./cmd/herald
	$(GO) run ./bench/send -herald $(BIN) -automation $(BENCH_AUTOMATION_FLAGS)

# Inbound bounce reports (docs/BENCHMARKS.md): 10,000 DSNs posted to
# herald's inbound SMTP server, one per message of a completed send.
bench-inbound:
	$(GO) build -o $(BIN) ./cmd/herald
	$(GO) run ./bench/send -herald $(BIN) -inbound -contacts 10000 -conns 4 $(BENCH_INBOUND_FLAGS)

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
