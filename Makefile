# ptk: build, test, run and install. `make help` lists the targets.
PREFIX ?= /usr/local
DESTDIR ?=
SYSCONFDIR ?= /etc
BINDIR = $(DESTDIR)$(PREFIX)/bin
DOCDIR = $(DESTDIR)$(PREFIX)/share/doc/ptk
UNITDIR = $(DESTDIR)$(PREFIX)/lib/systemd/system
GENERATORDIR = $(DESTDIR)$(PREFIX)/lib/systemd/system-generators
SYSUSERSDIR = $(DESTDIR)$(PREFIX)/lib/sysusers.d
MANDIR = $(DESTDIR)$(PREFIX)/share/man
BASHCOMPDIR = $(DESTDIR)$(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR = $(DESTDIR)$(PREFIX)/share/zsh/vendor-completions
FISHCOMPDIR = $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
# Where install-files takes the binaries from (the system test installs its own debug build).
BUILT ?= .build/release
CONFDIR = $(DESTDIR)$(SYSCONFDIR)/ptk
SWIFT ?= swift
# An import of a package target that Package.swift does not list for the importer is an error.
SWIFTFLAGS ?= --explicit-target-dependency-import-check error
# Arguments for `make run`, e.g. make run ARGS="--dir /tmp/photos --port 0"
ARGS ?=

.PHONY: help deps imports format lint build release test check run bench fuzz docs deb install install-files uninstall clean

help:
	@echo "make run        install missing Debian packages, build, run ptkd with defaults (ARGS=... adds flags)"
	@echo "make test       install missing Debian packages, build, run every test"
	@echo "make check      the fast loop: the checks and the unit tests not tagged slow (no packages installed)"
	@echo "make format     format Sources, Tests and Package.swift with the toolchain's swift format (.swift-format)"
	@echo "make bench      benchmarks beside nc, rsync and scp; writes docs/PERFORMANCE.md"
	@echo "make fuzz       every fuzz target for SECONDS_EACH (default 60) seconds; corpora in fuzz/corpus"
	@echo "make deb        Debian packages ptkd and ptk-send (and their -dbgsym) in .build/deb/"
	@echo "make docs       man pages and shell completion, from the command tables, in .build/docs/"
	@echo "make install    release build, systemd unit, man pages, completion and default config into DESTDIR/PREFIX (default /usr/local)"
	@echo "make uninstall  remove what make install installed (not the config or the photos)"

deps:
	@scripts/deps.sh

# Every import must be declared in Package.swift (the layering), every try? must say why its
# error does not matter, and every public declaration has a /// comment: checked before each build.
# The version is set in debian/changelog alone; the Swift constant is written from it.
imports:
	@scripts/version.sh --sync
	@scripts/check-imports.py
	@scripts/check-try.py
	@scripts/check-docs.py

# The layout of the code is the toolchain's `swift format` with .swift-format (lines of 120):
# `make format` rewrites, `make lint` (in make test and make check) refuses what differs.
format:
	$(SWIFT) format format -i -r Sources Tests Package.swift

lint:
	@$(SWIFT) format lint --strict -r Sources Tests Package.swift && echo "swift format: every file as .swift-format lays it out"

build: deps imports
	$(SWIFT) build $(SWIFTFLAGS)

release: deps imports
	$(SWIFT) build -c release $(SWIFTFLAGS)

# As root: also the test packages, and the Debian root the real-systemd test boots (built once
# per machine, kept in /var/cache/ptk; without it that test skips with a one-line reason).
test:
	@scripts/deps.sh --test
	@if [ "$$(id -u)" = 0 ]; then scripts/system-root.sh >/dev/null || echo "warning: no Debian root for the system test (see above)"; fi
	@scripts/version.sh --sync
	@scripts/check-imports.py
	@scripts/check-try.py
	@scripts/check-docs.py
	@scripts/tests-tagged.py --check
	@$(MAKE) --no-print-directory lint
	$(SWIFT) build --build-tests $(SWIFTFLAGS)
	SWIFT="$(SWIFT)" scripts/run-tests.sh --disable-xctest $(SWIFTFLAGS)

# The fast loop (a few minutes from a warm build): the checks, then the tests tagged unit
# but not slow, picked by their tags (scripts/tests-tagged.py). make test runs everything.
check:
	@start=$$(date +%s); \
	scripts/version.sh --sync && scripts/check-imports.py && scripts/check-try.py && scripts/check-docs.py && scripts/tests-tagged.py --check && \
	$(MAKE) --no-print-directory lint && \
	$(SWIFT) build --build-tests $(SWIFTFLAGS) && \
	$(SWIFT) test --skip-build --disable-xctest --filter "$$(scripts/tests-tagged.py --filter unit)" \
	    --skip "$$(scripts/tests-tagged.py --skip slow)"; status=$$?; \
	echo "make check: $$(( $$(date +%s) - start )) s"; exit $$status

run: release
	.build/release/ptkd $(ARGS)

# Benchmarks: figures, never pass/fail. Needs root for the latency sweep.
bench: release
	apt-get install -y -q netcat-openbsd rsync openssh-server openssh-client gnuplot-nox iputils-ping iproute2 >/dev/null
	bench/run

# Every fuzz target for SECONDS each (default 60): fuzz/run.sh; findings in fuzz/findings/.
SECONDS_EACH ?= 60
fuzz: deps
	fuzz/run.sh -t $(SECONDS_EACH)

# Man pages and completion scripts, made by ptk-docs from the command tables.
docs: release
	scripts/make-docs.sh .build/release .build/docs

# The Debian packages, built as a Debian build machine would (dpkg-buildpackage -b, debhelper),
# moved from the parent directory into .build/deb/.
deb: deps
	@scripts/deps.sh debhelper dpkg-dev lintian
	scripts/build-deb.sh

install: release install-files

# install without building: the files of BUILT (default .build/release) and the rest.
install-files:
	install -d $(BINDIR) $(DOCDIR) $(UNITDIR) $(GENERATORDIR) $(CONFDIR) $(SYSUSERSDIR) $(MANDIR)/man1 $(MANDIR)/man5 $(MANDIR)/man8 \
	    $(BASHCOMPDIR) $(ZSHCOMPDIR) $(FISHCOMPDIR)
	install -m 0755 $(BUILT)/ptkd $(BUILT)/ptk-send $(BUILT)/ptk $(BINDIR)/
	scripts/make-docs.sh $(BUILT) $(BUILT)/docs
	install -m 0644 $(BUILT)/docs/man/ptk-send.1 $(MANDIR)/man1/
	install -m 0644 $(BUILT)/docs/man/ptkd.conf.5 $(MANDIR)/man5/
	install -m 0644 $(BUILT)/docs/man/ptkd.8 $(BUILT)/docs/man/ptk.8 $(MANDIR)/man8/
	install -m 0644 $(BUILT)/docs/bash/ptkd $(BUILT)/docs/bash/ptk $(BUILT)/docs/bash/ptk-send $(BASHCOMPDIR)/
	install -m 0644 $(BUILT)/docs/zsh/_ptkd $(BUILT)/docs/zsh/_ptk $(BUILT)/docs/zsh/_ptk-send $(ZSHCOMPDIR)/
	install -m 0644 $(BUILT)/docs/fish/ptkd.fish $(BUILT)/docs/fish/ptk.fish $(BUILT)/docs/fish/ptk-send.fish $(FISHCOMPDIR)/
	install -m 0644 README.md docs/*.md $(DOCDIR)/
	sed -e 's|@BINDIR@|$(PREFIX)/bin|g' -e 's|@DOCDIR@|$(PREFIX)/share/doc/ptk|g' \
	    systemd/ptkd.service.in > $(UNITDIR)/ptkd.service
	chmod 0644 $(UNITDIR)/ptkd.service
	# The generator that opens ptkd.conf's inboxes and drop folders to the unit (systemd runs it
	# at boot and at every daemon-reload).
	sed -e 's|@BINDIR@|$(PREFIX)/bin|g' systemd/ptkd-folders.in > $(GENERATORDIR)/ptkd-folders
	chmod 0755 $(GENERATORDIR)/ptkd-folders
	install -m 0644 systemd/ptk.sysusers $(SYSUSERSDIR)/ptk.conf
	# The service user must exist before the first start: systemd creates it at boot; on a
	# running systemd, create it now.
	if [ -z "$(DESTDIR)" ] && [ -d /run/systemd/system ]; then systemd-sysusers $(SYSUSERSDIR)/ptk.conf; fi
	# An existing configuration may have been edited: never overwrite it.
	[ -e $(CONFDIR)/ptkd.conf ] || install -m 0644 etc/ptkd.conf $(CONFDIR)/ptkd.conf
	@echo "Installed. Start the service with: systemctl daemon-reload && systemctl enable --now ptkd"

uninstall:
	rm -f $(BINDIR)/ptkd $(BINDIR)/ptk-send $(BINDIR)/ptk $(UNITDIR)/ptkd.service $(SYSUSERSDIR)/ptk.conf
	rm -f $(GENERATORDIR)/ptkd-folders
	rm -f $(MANDIR)/man1/ptk-send.1 $(MANDIR)/man5/ptkd.conf.5 $(MANDIR)/man8/ptkd.8 $(MANDIR)/man8/ptk.8
	rm -f $(BASHCOMPDIR)/ptkd $(BASHCOMPDIR)/ptk $(BASHCOMPDIR)/ptk-send $(ZSHCOMPDIR)/_ptkd $(ZSHCOMPDIR)/_ptk $(ZSHCOMPDIR)/_ptk-send
	rm -f $(FISHCOMPDIR)/ptkd.fish $(FISHCOMPDIR)/ptk.fish $(FISHCOMPDIR)/ptk-send.fish
	rm -rf $(DOCDIR)
	@echo "Left in place: $(CONFDIR)/ptkd.conf, the received photos (/var/lib/ptk) and the user ptk."

clean:
	$(SWIFT) package clean
