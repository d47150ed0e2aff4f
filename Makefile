# mqsim: the two commands a newcomer needs are `make demo` and `make test`.
GO ?= go
DEMO ?= kernel-pingpong
SWARM_SEEDS ?= 10000

.PHONY: demo test bench lint swarm fuzz build

## demo: run the flagship scenario and print its transcript
demo:
	$(GO) run ./cmd/mqsim run $(DEMO)

## test: every test, including the fuzz seed corpora and the determinism checks
test:
	$(GO) vet ./...
	$(GO) test ./...

## bench: the benchmarks, each reported as a ratio against a baseline measured in the same run
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 20x ./...

## lint: formatting, vet and staticcheck (pinned in go.mod as a tool)
lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt would change: $$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) tool staticcheck ./...

## swarm: long random fault-injection runs (not part of make test)
swarm:
	@echo "swarm runs arrive with the swarm command; nothing to run yet"

## fuzz: a few minutes on each parser
fuzz:
	$(GO) test ./sim -run '^$$' -fuzz FuzzParsePlan -fuzztime 2m
	$(GO) test ./scenarios -run '^$$' -fuzz FuzzParse -fuzztime 2m

build:
	$(GO) build -o bin/mqsim ./cmd/mqsim
