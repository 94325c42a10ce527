GO      ?= go
BIN     := bin/nash
PKGS    := ./...
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)

.PHONY: build run test accept test-unprivileged bench lint fuzz clean

# bin/nash is the whole program. nash-sandbox is the sandbox init; nash
# starts it from its own directory (and re-executes itself when it is
# missing, more slowly). nash-index carries out nash index and nash find, so
# that nash itself does not link the index. All are linked statically (no
# cgo): a process then starts and exits without the dynamic loader.
build:
	CGO_ENABLED=0 $(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN) ./cmd/nash
	CGO_ENABLED=0 $(GO) build -o bin/nash-sandbox ./cmd/nash-sandbox
	CGO_ENABLED=0 $(GO) build -o bin/nash-index ./cmd/nash-index

run: build
	./$(BIN)

# Every invariant, quickly (-short: corpus-scale tests take a sample): as
# the calling user, then (when that user is root, as in CI) the sandbox
# tests again as an unprivileged user, since that is who runs nash.
test: lint
	$(GO) test -short -race -timeout 30m $(PKGS)
	@if [ "$$(id -u)" = 0 ]; then NASH_TEST_FLAGS=-test.short ./scripts/test-unprivileged.sh; fi

# The acceptance tier: corpus-scale runs (all 600 fidelity commands, 100
# crash trials, the whole tldr set, the known-item evaluations), as the
# calling user and, as root, again as an unprivileged user.
accept:
	$(GO) test -timeout 60m $(PKGS)
	@if [ "$$(id -u)" = 0 ]; then ./scripts/test-unprivileged.sh; fi

test-unprivileged:
	./scripts/test-unprivileged.sh

bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 5 -timeout 60m $(PKGS)

# gofmt, vet, and a build for macOS: the module builds off Linux, where the
# sandbox returns its unsupported error (sandbox/sandbox_other.go).
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	GOOS=darwin $(GO) build $(PKGS)

clean:
	rm -rf bin
