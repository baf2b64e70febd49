# ptk: build, test, run and install. `make help` lists the targets.
PREFIX ?= /usr/local
DESTDIR ?=
SYSCONFDIR ?= /etc
BINDIR = $(DESTDIR)$(PREFIX)/bin
DOCDIR = $(DESTDIR)$(PREFIX)/share/doc/ptk
UNITDIR = $(DESTDIR)$(PREFIX)/lib/systemd/system
SYSUSERSDIR = $(DESTDIR)$(PREFIX)/lib/sysusers.d
# Where install-files takes the binaries from (the system test installs its own debug build).
BUILT ?= .build/release
CONFDIR = $(DESTDIR)$(SYSCONFDIR)/ptk
SWIFT ?= swift
# An import of a package target that Package.swift does not list for the importer is an error.
SWIFTFLAGS ?= --explicit-target-dependency-import-check error
# Arguments for `make run`, e.g. make run ARGS="--dir /tmp/photos --port 0"
ARGS ?=

.PHONY: help deps imports build release test run bench install install-files uninstall clean

help:
	@echo "make run        install missing Debian packages, build, run ptkd with defaults (ARGS=... adds flags)"
	@echo "make test       install missing Debian packages, build, run every test"
	@echo "make bench      benchmarks beside nc, rsync and scp; writes docs/PERFORMANCE.md"
	@echo "make install    release build, systemd unit and default config into DESTDIR/PREFIX (default /usr/local)"
	@echo "make uninstall  remove what make install installed (not the config or the photos)"

deps:
	@scripts/deps.sh

# Every import must be declared in Package.swift (the layering), and every try? must say why
# its error does not matter: both checked before each build.
imports:
	@scripts/check-imports.py
	@scripts/check-try.py

build: deps imports
	$(SWIFT) build $(SWIFTFLAGS)

release: deps imports
	$(SWIFT) build -c release $(SWIFTFLAGS)

# As root: also the test packages, and the Debian root the real-systemd test boots (built once
# per machine, kept in /var/cache/ptk; without it that test skips with a one-line reason).
test:
	@scripts/deps.sh --test
	@if [ "$$(id -u)" = 0 ]; then scripts/system-root.sh >/dev/null || echo "warning: no Debian root for the system test (see above)"; fi
	@scripts/check-imports.py
	@scripts/check-try.py
	$(SWIFT) build --build-tests $(SWIFTFLAGS)
	$(SWIFT) test --disable-xctest $(SWIFTFLAGS)

run: release
	.build/release/ptkd $(ARGS)

# Benchmarks: figures, never pass/fail. Needs root for the latency sweep.
bench: release
	apt-get install -y -q netcat-openbsd rsync openssh-server openssh-client gnuplot-nox iputils-ping iproute2 >/dev/null
	bench/run

install: release install-files

# install without building: the files of BUILT (default .build/release) and the rest.
install-files:
	install -d $(BINDIR) $(DOCDIR) $(UNITDIR) $(CONFDIR) $(SYSUSERSDIR)
	install -m 0755 $(BUILT)/ptkd $(BUILT)/ptk-send $(BUILT)/ptk $(BINDIR)/
	install -m 0644 README.md docs/*.md $(DOCDIR)/
	sed -e 's|@BINDIR@|$(PREFIX)/bin|g' -e 's|@DOCDIR@|$(PREFIX)/share/doc/ptk|g' \
	    systemd/ptkd.service.in > $(UNITDIR)/ptkd.service
	chmod 0644 $(UNITDIR)/ptkd.service
	install -m 0644 systemd/ptk.sysusers $(SYSUSERSDIR)/ptk.conf
	# The service user must exist before the first start: systemd creates it at boot; on a
	# running systemd, create it now.
	if [ -z "$(DESTDIR)" ] && [ -d /run/systemd/system ]; then systemd-sysusers $(SYSUSERSDIR)/ptk.conf; fi
	# An existing configuration may have been edited: never overwrite it.
	[ -e $(CONFDIR)/ptkd.conf ] || install -m 0644 etc/ptkd.conf $(CONFDIR)/ptkd.conf
	@echo "Installed. Start the service with: systemctl daemon-reload && systemctl enable --now ptkd"

uninstall:
	rm -f $(BINDIR)/ptkd $(BINDIR)/ptk-send $(BINDIR)/ptk $(UNITDIR)/ptkd.service $(SYSUSERSDIR)/ptk.conf
	rm -rf $(DOCDIR)
	@echo "Left in place: $(CONFDIR)/ptkd.conf, the received photos (/var/lib/ptk) and the user ptk."

clean:
	$(SWIFT) package clean
