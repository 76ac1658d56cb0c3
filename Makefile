# colorcam — the two commands that matter:
#   make demo   installs what it needs, builds (release), runs the main job on the bundled defaults
#   make test   installs what it needs, builds, runs every test (unit, integration, conformance)
SHELL := /bin/bash
export PATH := /opt/swift/usr/bin:$(PATH)
SWIFT ?= swift
PYTHON ?= python3
RELEASE_BIN := .build/release/colorcam
DEMO := demo

.PHONY: demo test deps build release unit integration conformance vivid profile clean

deps:
	@tools/deps.sh

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release --product colorcam
	$(SWIFT) build -c release --product preview-harness

# The main job. Until the colorizer and detector land, the inference is a labelled DIAGNOSTIC SIMULATION
# (a 90 ms stand-in for the model): the demo shows the scheduler holding 30 fps with no queued predictions.
demo: release
	@mkdir -p $(DEMO)
	@echo "== rendering a 10 s 640x480 30 fps synthetic clip: $(DEMO)/clip.y4m"
	$(RELEASE_BIN) testclip $(DEMO)/clip.y4m --size 640x480 --fps 30 --seconds 10
	@echo "== replaying it in real time with a SIMULATED 90 ms inference (not a model; the colorizer lands later)"
	$(RELEASE_BIN) replay $(DEMO)/clip.y4m --pace realtime --simulate-inference-ms 90 \
	    --trace $(DEMO)/trace.json --output $(DEMO)/out.y4m
	@echo "== trace report ($(DEMO)/report.html is the timeline; $(DEMO)/trace.json opens in ui.perfetto.dev too)"
	$(RELEASE_BIN) trace-report $(DEMO)/trace.json --max-lag-ms 2 --min-fps 29.5 --html $(DEMO)/report.html

unit: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

integration: release
	COLORCAM=$(RELEASE_BIN) PREVIEW_HARNESS=.build/release/preview-harness $(PYTHON) -m pytest -q Tests/integration

# Inference conformance: ONNX models generated with the onnx package, run in onnxruntime and in colorcam.
conformance: release
	COLORCAM_BIN=$(RELEASE_BIN) $(PYTHON) -m pytest -q tools/conformance

# V4L2 capture against the kernel's vivid driver, in one VM boot (../shared/vivid/vivid-run).
vivid: release
	Tests/vivid/run.sh

test: unit integration conformance vivid

# Benchmarks (not part of make test): print figures and ratios against a peer run in the same script.
profile: release
	tools/profile/passthrough.sh

clean:
	rm -rf .build $(DEMO)
