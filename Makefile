# ptk: build, test, run and install. `make help` lists the targets.
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR = $(DESTDIR)$(PREFIX)/bin
DOCDIR = $(DESTDIR)$(PREFIX)/share/doc/ptk
SWIFT ?= swift
# Arguments for `make run`, e.g. make run ARGS="--dir /tmp/photos --port 0"
ARGS ?=

.PHONY: help deps build release test run install uninstall clean

help:
	@echo "make run      install missing Debian packages, build, run ptkd with defaults (ARGS=... adds flags)"
	@echo "make test     install missing Debian packages, build, run every test"
	@echo "make install  release build into \$$(DESTDIR)\$$(PREFIX) (default /usr/local); make uninstall removes it"

deps:
	@scripts/deps.sh

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --disable-xctest

run: release
	.build/release/ptkd $(ARGS)

install: release
	install -d $(BINDIR) $(DOCDIR)
	install -m 0755 .build/release/ptkd .build/release/ptk-send $(BINDIR)/
	install -m 0644 README.md docs/*.md $(DOCDIR)/

uninstall:
	rm -f $(BINDIR)/ptkd $(BINDIR)/ptk-send
	rm -rf $(DOCDIR)

clean:
	$(SWIFT) package clean
