GO      ?= go
BIN     := bin/nash
PKGS    := ./...
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
# Every package but cmd/nash (see test), and cmd/nash's terminal tests.
RACE_PKGS      = $(shell $(GO) list $(PKGS) | grep -v '/cmd/nash$$')
TERMINAL_TESTS := Tmux|Terminal

.PHONY: build run test accept test-unprivileged bench lint fuzz clean

# bin/nash is the whole program. nash-sandbox is the sandbox init; nash
# starts it from its own directory (and re-executes itself when it is
# missing, more slowly). nash-index is the index server nash talks to, so
# that nash itself does not link the index. All are linked statically (no
# cgo): a process then starts and exits without the dynamic loader.
build:
	CGO_ENABLED=0 $(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN) ./cmd/nash
	CGO_ENABLED=0 $(GO) build -o bin/nash-sandbox ./cmd/nash-sandbox
	CGO_ENABLED=0 $(GO) build -o bin/nash-index ./cmd/nash-index

run: build
	./$(BIN)

# Every invariant, quickly (-short: corpus-scale tests take a sample), in
# under 15 minutes on 2 cores: every package under the race detector but
# cmd/nash, whose end-to-end tests start hundreds of nash processes, each
# about ten times slower under it (11 minutes instead of 1): there only the
# terminal tests, where the shell's goroutines meet, run under it. Then
# (when the caller is root, as in CI) the sandbox and cmd/nash tests again
# as an unprivileged user, since that is who runs nash.
test: lint
	$(GO) test -short -race -timeout 30m $(RACE_PKGS)
	$(GO) test -short -timeout 30m ./cmd/nash
	$(GO) test -short -race -timeout 30m -run '$(TERMINAL_TESTS)' ./cmd/nash
	@if [ "$$(id -u)" = 0 ]; then NASH_TEST_FLAGS=-test.short ./scripts/test-unprivileged.sh; fi

# The acceptance tier: corpus-scale runs (all 600 fidelity commands, 100
# crash trials, the whole tldr set, the known-item evaluations), cmd/nash's
# quick tier under the race detector, as the calling user and, as root,
# again as an unprivileged user.
accept:
	$(GO) test -timeout 60m $(PKGS)
	$(GO) test -short -race -timeout 30m ./cmd/nash
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
