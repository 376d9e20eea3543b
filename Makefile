# Herald: `make run` serves on :8080 with an SQLite file; `make test` runs every test.
GO      ?= go
BIN     := bin/herald
PKGS    := ./...

.PHONY: build run test generate bench vet fmt clean

build:
	$(GO) build -o $(BIN) ./cmd/herald

run: build
	./$(BIN) serve

# -race always; set HERALD_TEST_DATABASE=postgres://… to run the database
# tests on PostgreSQL, HERALD_TEST_STRICT=1 to fail instead of skipping
# when Chromium or PostgreSQL is missing.
test:
	$(GO) test -race -count=1 -timeout 20m $(PKGS)

generate:
	$(GO) tool templ generate

vet:
	$(GO) vet $(PKGS)

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin
