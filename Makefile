# mqsim: the two commands a newcomer needs are `make demo` and `make test`.
GO ?= go
DEMO ?= acks1-leader-crash
SWARM_SEEDS ?= 10000

.PHONY: demo demo-run test test-browser test-clients bench bench-scale lint swarm labs fuzz build

## demo: open the flagship scenario in the terminal UI (q quits, ? shows every key);
## without a terminal it falls back to demo-run
demo:
	@if [ -t 0 ] && [ -t 1 ]; then $(GO) run ./cmd/mqsim tui $(DEMO); \
	else echo "make demo: no terminal; running make demo-run instead"; $(MAKE) --no-print-directory demo-run; fi

## demo-run: run the flagship scenario and print its transcript (it shows a lost write on
## purpose: exit status 1, "the checks found violations", is its expected ending)
demo-run:
	$(GO) run ./cmd/mqsim run $(DEMO) || test $$? -eq 1

## test: every test, including the fuzz seed corpora and the determinism checks, and
## short swarms of the safe, txn and share profiles
test:
	$(GO) vet ./...
	$(GO) test ./...
	$(GO) run ./cmd/mqsim swarm --seeds 200 --profile safe
	$(GO) run ./cmd/mqsim swarm --seeds 100 --profile txn
	$(GO) run ./cmd/mqsim swarm --seeds 100 --profile share

## test-browser: the HTML page of a run (mqsim export --format html) in a real headless
## chromium, driven with chromedp: steps, jumps, the verdict's links, a screenshot saved as
## cmd/mqsim/testdata/html-acks1-leader-crash.png (needs /usr/bin/chromium, or CHROMIUM=path)
test-browser:
	$(GO) test -tags browser -count=1 -run 'TestHTMLPageInBrowser' ./cmd/mqsim

## test-clients: real Kafka clients through mqsim serve: Debian's kcat (librdkafka) produces
## (plain, then idempotent with acks=all), consumes from the beginning, and consumes as a
## group that commits; the session then replays to the same hash (needs kcat on the PATH,
## or KCAT=path)
test-clients:
	$(GO) test -tags clients -count=1 -run 'TestKcat' ./cmd/mqsim

## bench: the benchmarks, each reported as a ratio against a baseline measured in the same run;
## the last one times mqsim check on a 10^6-line history from the file to the verdict
## (regenerate the file yourself with: go run ./cmd/genhistory -ops 500000 > big.jsonl)
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 20x ./...
	MQSIM_CHECK_BENCH_OPS=500000 $(GO) test -run '^$$' -bench BenchmarkCheckFile -benchtime 3x ./cmd/mqsim
	$(MAKE) --no-print-directory bench-scale

## bench-scale: the scale workloads (produce count=100000; 1,000 partitions; 64 brokers with
## 1,000 partitions and 100,000 messages), each against the same workload at a tenth of
## its size: ratio-cpu near 10 is linear, near 100 quadratic (about half a minute in all)
bench-scale:
	MQSIM_SCALE_BENCH=1 $(GO) test -run '^$$' -bench BenchmarkScale -benchtime 3x ./scenarios

## lint: formatting, vet and staticcheck (pinned in go.mod as a tool)
lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt would change: $$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) tool staticcheck ./...

## swarm: long random fault-injection runs of the safe and share profiles (not part of make
## test); failing seeds, shrunk, go to swarm-failures/ and swarm-failures-share/
swarm:
	$(GO) run ./cmd/mqsim swarm --seeds $(SWARM_SEEDS) --profile safe --out swarm-failures
	$(GO) run ./cmd/mqsim swarm --seeds $(SWARM_SEEDS) --profile share --out swarm-failures-share

## labs: each lab's reference solution against 2,000 seeds (go test runs 200)
labs:
	$(GO) run ./cmd/mqsim lab idempotent-consumer --solution --seeds 2000
	$(GO) run ./cmd/mqsim lab replicated-log --solution --seeds 2000
	$(GO) run ./cmd/mqsim lab ordered-retries --solution --seeds 2000

## fuzz: a few minutes on each parser
fuzz:
	$(GO) test ./sim -run '^$$' -fuzz FuzzParsePlan -fuzztime 2m
	$(GO) test ./scenarios/script -run '^$$' -fuzz FuzzParse -fuzztime 2m
	$(GO) test ./model/history -run '^$$' -fuzz FuzzReadJSONLines -fuzztime 2m
	$(GO) test ./model/history -run '^$$' -fuzz FuzzDecoderAgrees -fuzztime 2m

build:
	$(GO) build -o bin/mqsim ./cmd/mqsim
