# colorcam — the two commands that matter:
#   make demo   installs what it needs, builds (release), runs the main job on the bundled defaults
#   make test   installs what it needs, builds, runs every test (unit, integration, conformance, vivid, fuzz)
SHELL := /bin/bash
export PATH := /opt/swift/usr/bin:$(PATH)
SWIFT ?= swift
PYTHON ?= python3
RELEASE_BIN := .build/release/colorcam
DEMO := demo

.PHONY: demo test disk-space deps build-deps serve-venv-background build release lint format unit integration conformance \
	vivid fuzz profile test-sanitize clean

# Everything: Debian packages and Python test oracles (tools/deps.sh), and the remote-inference server's venv
# (tools/serve/venv.sh, only the integration suite uses it).
deps: build-deps
	@tools/serve/venv.sh

build-deps:
	@tools/deps.sh

build: build-deps
	$(SWIFT) build

release: build-deps
	$(SWIFT) build -c release --product colorcam
	$(SWIFT) build -c release --product preview-harness

# The main job: render the demo recording (three black-and-white prints of held-out photos on a table; one placed,
# one removed; gentle camera motion), replay it in real time through detect → colorize → composite with the default
# model, and report: the trace summary and verdict, the saved photos scored against their colour originals, and the
# output checked against the input (outside the prints untouched, inside the live L* kept).
DEMO_SCENE_DEPS := tools/demo/scene.py tools/scenes/render.py tools/scenes/textures.py $(wildcard Assets/demo-photos/*.png)

$(DEMO)/scene.y4m: $(DEMO_SCENE_DEPS)
	@mkdir -p $(DEMO)
	@echo "== rendering the demo scene (10 s, 640x480, 30 fps): $(DEMO)/scene.y4m"
	$(PYTHON) tools/demo/scene.py --out $(DEMO)/scene.y4m.partial --truth $(DEMO)/truth.json
	@mv $(DEMO)/scene.y4m.partial $(DEMO)/scene.y4m

demo: release $(DEMO)/scene.y4m
	@rm -rf $(DEMO)/photos $(DEMO)/out.mp4
	@echo "== replaying it in real time: detect → colorize (one at a time) → composite, default model"
	$(RELEASE_BIN) replay $(DEMO)/scene.y4m --pace realtime --background gray --trace $(DEMO)/trace.json \
	    --output $(DEMO)/out.y4m --save-photos $(DEMO)/photos
	@if command -v ffmpeg >/dev/null; then \
	    ffmpeg -loglevel error -y -i $(DEMO)/out.y4m -c:v libx264 -pix_fmt yuv420p -crf 20 $(DEMO)/out.mp4 \
	    && echo "== $(DEMO)/out.mp4"; fi
	@echo "== trace report ($(DEMO)/report.html is the timeline; $(DEMO)/trace.json opens in ui.perfetto.dev too)"
	$(RELEASE_BIN) trace-report $(DEMO)/trace.json --max-lag-ms 1 --min-fps 29.5 --max-latency-ms 50 \
	    --html $(DEMO)/report.html
	@echo "== saved photos ($(DEMO)/photos) against the colour originals"
	$(PYTHON) tools/demo/score.py --photos $(DEMO)/photos --originals Assets/demo-photos --truth $(DEMO)/truth.json \
	    --require-better
	@echo "== output against input (outside the prints exact, inside the live L* kept)"
	$(PYTHON) tools/demo/check_output.py --input $(DEMO)/scene.y4m --output $(DEMO)/out.y4m \
	    --truth $(DEMO)/truth.json --background gray --dl-percentile 100 --quiet

# Formatting: .swift-format (120 columns, 4-space indent, ordered imports; no rewriting rules). `make format` applies
# it; `make lint` (part of `make test`) fails on any difference.
SWIFT_SOURCES := Package.swift Sources Tests tools/fuzz/targets
lint:
	swift-format lint --strict --recursive --configuration .swift-format $(SWIFT_SOURCES)

format:
	swift-format format --in-place --recursive --configuration .swift-format $(SWIFT_SOURCES)

unit: build-deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

integration: release
	@tools/serve/venv.sh
	COLORCAM=$(RELEASE_BIN) PREVIEW_HARNESS=.build/release/preview-harness $(PYTHON) -m pytest -q Tests/integration

# Inference conformance: ONNX models generated with the onnx package, run in onnxruntime and in colorcam.
conformance: release
	COLORCAM_BIN=$(RELEASE_BIN) $(PYTHON) -m pytest -q tools/conformance

# V4L2 capture against the kernel's vivid driver, in one VM boot (../shared/vivid/vivid-run); then a second, short
# boot on a CPU model without AVX (the engine's baseline kernels, chosen by themselves).
vivid: release
	Tests/vivid/run.sh
	Tests/vivid/isa.sh

# libFuzzer targets (tools/fuzz/README.md) for the Y4M reader, the ONNX decoder, the trace reader and the HTTP request
# parser, built with swiftc -sanitize=fuzzer,address into .build/fuzz (not by swift build). Each runs FUZZ_SECONDS,
# FUZZ_JOBS at a time; any crash fails with the crashing input left in .build/fuzz/artifacts.
# make fuzz FUZZ_SECONDS=600 for a long run; tools/fuzz/run.py --target onnx-graph for graph building.
FUZZ_SECONDS ?= 30
FUZZ_JOBS ?= 2
fuzz: build-deps
	$(PYTHON) tools/fuzz/run.py --seconds $(FUZZ_SECONDS) --jobs $(FUZZ_JOBS)

# The server's venv installs in the background (downloads and unpacking, ~80 s on a fresh machine) while the Swift
# builds run; the integration suite waits for it.
test: disk-space serve-venv-background lint unit integration conformance vivid fuzz

serve-venv-background:
	@tools/serve/venv.sh --background

# A full run writes about 6 GiB (build products, scene caches, the vivid guest's files, pytest's temporary folders):
# with less than 4 GiB free it stops at once and says so, rather than failing later on a truncated file.
disk-space:
	@for d in . "$${TMPDIR:-/tmp}"; do \
	  free_kib=$$(df -Pk "$$d" 2>/dev/null | awk 'NR == 2 { print $$4 }'); [ -n "$$free_kib" ] || continue; \
	  echo "free space on $$(df -P "$$d" | awk 'NR == 2 { print $$6 }') ($$d): $$((free_kib / 1048576)) GiB"; \
	  if [ "$$free_kib" -lt $$((4 * 1048576)) ]; then \
	    echo "make test: only $$((free_kib / 1024)) MiB free under $$d; the suite needs about 6 GiB" >&2; exit 1; fi; \
	done

# The unit tests under AddressSanitizer (+ LeakSanitizer) and then ThreadSanitizer, each built into its own scratch
# path (.build/asan, .build/tsan; the normal .build is untouched). Any report fails it. Not part of `make test`: from
# a clean scratch path each half takes longer than the whole of `make test` (wall times on the 2-core build machine
# are in README.md, "Tests"). Suppressions, each explained, are toolchain false positives only:
# tools/sanitize/lsan.supp, tools/sanitize/tsan.supp. One half alone: tools/sanitize/run.sh address|thread.
test-sanitize: build-deps
	tools/sanitize/run.sh address thread

# Benchmarks (not part of make test): print figures and ratios against a peer run in the same script.
profile: release $(DEMO)/scene.y4m
	tools/profile/passthrough.sh
	$(PYTHON) tools/profile/e2e.py --scene $(DEMO)/scene.y4m

clean:
	rm -rf .build $(DEMO)
