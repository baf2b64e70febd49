# ptk: build, test, run and install. `make help` lists the targets.
PREFIX ?= /usr/local
DESTDIR ?=
SYSCONFDIR ?= /etc
BINDIR = $(DESTDIR)$(PREFIX)/bin
DOCDIR = $(DESTDIR)$(PREFIX)/share/doc/ptk
UNITDIR = $(DESTDIR)$(PREFIX)/lib/systemd/system
CONFDIR = $(DESTDIR)$(SYSCONFDIR)/ptk
SWIFT ?= swift
# Arguments for `make run`, e.g. make run ARGS="--dir /tmp/photos --port 0"
ARGS ?=

.PHONY: help deps build release test run bench install uninstall clean

help:
	@echo "make run        install missing Debian packages, build, run ptkd with defaults (ARGS=... adds flags)"
	@echo "make test       install missing Debian packages, build, run every test"
	@echo "make bench      benchmarks beside nc, rsync and scp; writes docs/PERFORMANCE.md"
	@echo "make install    release build, systemd unit and default config into DESTDIR/PREFIX (default /usr/local)"
	@echo "make uninstall  remove what make install installed (not the config or the photos)"

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

# Benchmarks: figures, never pass/fail. Needs root for the latency sweep.
bench: release
	apt-get install -y -q netcat-openbsd rsync openssh-server openssh-client gnuplot-nox iputils-ping iproute2 >/dev/null
	bench/run

install: release
	install -d $(BINDIR) $(DOCDIR) $(UNITDIR) $(CONFDIR)
	install -m 0755 .build/release/ptkd .build/release/ptk-send $(BINDIR)/
	install -m 0644 README.md docs/*.md $(DOCDIR)/
	sed -e 's|@BINDIR@|$(PREFIX)/bin|g' -e 's|@DOCDIR@|$(PREFIX)/share/doc/ptk|g' \
	    systemd/ptkd.service.in > $(UNITDIR)/ptkd.service
	chmod 0644 $(UNITDIR)/ptkd.service
	# An existing configuration may have been edited: never overwrite it.
	[ -e $(CONFDIR)/ptkd.conf ] || install -m 0644 etc/ptkd.conf $(CONFDIR)/ptkd.conf
	@echo "Installed. Start the service with: systemctl daemon-reload && systemctl enable --now ptkd"

uninstall:
	rm -f $(BINDIR)/ptkd $(BINDIR)/ptk-send $(UNITDIR)/ptkd.service
	rm -rf $(DOCDIR)
	@echo "Left in place: $(CONFDIR)/ptkd.conf and the received photos (/var/lib/ptk)."

clean:
	$(SWIFT) package clean
