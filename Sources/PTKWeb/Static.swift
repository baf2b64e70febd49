/// The pages' stylesheet and script, served as /static/app.css and /static/app.js: plain CSS
/// and a little JavaScript, no framework and no build step.
enum WebStatic {
    static let css = """
        :root { color-scheme: light; --line: #ddd; --muted: #666; --accent: #0b5fff; }
        * { box-sizing: border-box; }
        body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; background: #fafafa; color: #222; }
        header { display: flex; flex-wrap: wrap; align-items: center; justify-content: space-between; gap: .5rem;
                 padding: .6rem 1rem; background: #fff; border-bottom: 1px solid var(--line); position: sticky; top: 0; z-index: 1; }
        header .home { font-weight: 600; color: inherit; text-decoration: none; }
        nav { display: flex; align-items: center; gap: 1rem; }
        nav form { margin: 0; }
        main { padding: 1rem; max-width: 1400px; margin: 0 auto; }
        footer { padding: 1rem; color: var(--muted); font-size: .75rem; overflow-wrap: anywhere; }
        h1 { font-size: 1.15rem; font-weight: 600; overflow-wrap: anywhere; }
        h2 { font-size: 1rem; font-weight: 600; margin: 1.5rem 0 .5rem; }
        a { color: var(--accent); }
        button { font: inherit; padding: .4rem .8rem; border: 1px solid var(--line); border-radius: 6px; background: #fff; cursor: pointer; }
        input, select, textarea { font: inherit; padding: .35rem; border: 1px solid #bbb; border-radius: 4px; max-width: 100%; }
        label { display: inline-flex; flex-wrap: wrap; align-items: center; gap: .4rem; }
        a:focus-visible, button:focus-visible, summary:focus-visible, input:focus-visible, select:focus-visible, textarea:focus-visible {
          outline: 3px solid var(--accent); outline-offset: 2px; }
        /* The gallery (issue 58): rows of photos at their own aspect ratio. app.js fills each row to the
           width (class "justified", sizes from data-w/data-h); without it each image keeps its 1x size
           (its width and height attributes), in rows as wide as they come. */
        .grid { display: flex; flex-wrap: wrap; align-items: flex-start; gap: .6rem 4px; }
        figure { margin: 0; min-width: 0; max-width: 100%; display: flex; flex-direction: column; scroll-margin: 5rem 0 1rem; }
        figure a { display: flex; align-items: center; justify-content: center; position: relative; overflow: hidden;
                   background: #e8e8e8; border-radius: 2px; }
        figure.alpha a { background: repeating-conic-gradient(#eee 0 25%, #fff 0 50%) 0 0 / 16px 16px; }
        figure img { display: block; max-width: 100%; height: auto; }
        .justified figure img { width: 100%; height: 100%; max-width: none; object-fit: cover; }
        figure:target a { outline: 3px solid var(--accent); outline-offset: 2px; }
        figure .none { display: flex; align-items: center; justify-content: center; width: 8rem; height: 6rem; }
        .justified figure .none { width: 100%; height: 100%; }
        /* As wide as the image, one line: a long name ends with an ellipsis, the rating stays. */
        figcaption { display: flex; gap: .3rem; width: 0; min-width: 100%; font-size: .8rem; margin-top: .2rem; }
        figcaption .name { flex: 0 1 auto; min-width: 0; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
        .stars { color: #c80; white-space: nowrap; flex: none; }
        .more { text-align: center; padding: 1rem; }
        .none, .hint { color: var(--muted); font-size: .85rem; }
        .none { padding: .5rem; text-align: center; }
        .filters { display: flex; flex-wrap: wrap; gap: .6rem; align-items: center; }
        .full img { max-width: 100%; max-height: 80vh; display: block; margin: 0 auto; }
        .downloads { display: flex; flex-wrap: wrap; gap: 1rem; }
        .details { border-collapse: collapse; font-size: .85rem; margin: 1rem 0; width: 100%; }
        .details th { text-align: left; vertical-align: top; padding: .2rem .8rem .2rem 0; color: var(--muted); font-weight: normal; white-space: nowrap; }
        .details td { overflow-wrap: anywhere; padding: .2rem 0; }
        .change { display: flex; flex-wrap: wrap; gap: .5rem; align-items: flex-end; margin: .8rem 0; }
        .change label { flex: 1 1 16rem; }
        .change input, .change textarea { flex: 1 1 auto; min-width: 0; width: 100%; }
        .danger { color: #b00020; }
        button.danger { border-color: #b00020; }
        .error { color: #b00020; font-weight: 600; }
        .login { display: flex; flex-direction: column; gap: .8rem; max-width: 24rem; }
        .login label { flex-direction: column; align-items: stretch; }
        .drop { border: 2px dashed #bbb; border-radius: 8px; padding: 1.5rem; text-align: center; background: #fff; }
        .drop.over { border-color: var(--accent); background: #eef4ff; }
        .queue { list-style: none; padding: 0; }
        .queue li { display: grid; grid-template-columns: 1fr auto; gap: .2rem .6rem; padding: .5rem 0; border-bottom: 1px solid var(--line); }
        .queue .file { overflow-wrap: anywhere; }
        .queue progress { grid-column: 1 / -1; width: 100%; }
        .queue .status { font-size: .85rem; color: var(--muted); }
        .queue .saved .status { color: #1a7f37; }
        .queue .refused .status { color: #b00020; font-weight: 600; }
        @media (max-width: 480px) {
          main { padding: .6rem; }
          .grid { row-gap: .4rem; }
        }
        /* Without script at 3x, the 1x size would stretch the 360 thumbnail: two thirds of it. */
        @media (min-resolution: 2.5dppx) { .grid:not(.justified) figure:not(.small) img { zoom: .6667; } }
        /* An icon keeps room for its name. */
        .grid:not(.justified) figure.small { min-width: 5rem; }
        /* The viewer: the photo fills the screen; the links float over it. */
        body.viewer { background: #000; color: #eee; height: 100vh; height: 100dvh; overflow: hidden; }
        .stage { position: fixed; inset: 0; max-width: none; margin: 0; padding: 0; display: flex; align-items: center; justify-content: center; }
        .stage img { display: block; width: 100%; height: 100%; object-fit: contain; }
        /* A video (issue 58) stops above the details' line, so that its controls stay reachable. */
        .stage.video { bottom: 3rem; }
        .stage video:not([hidden]) { display: block; width: 100%; height: 100%; object-fit: contain; background: #000; }
        .stage .cannot:not([hidden]) { display: flex; flex-direction: column; align-items: center; width: 100%; height: 100%; }
        .stage .cannot img { flex: 1; min-height: 0; }
        .stage .cannot p { margin: .5rem 1rem; text-align: center; color: #ccc; }
        .stage .cannot a { color: #9cf; }
        /* A Live Photo (issue 58): its video over the still while it plays; the LIVE button above. */
        .stage.live video.motion:not([hidden]) { position: absolute; inset: 0; display: block; width: 100%; height: 100%; object-fit: contain; background: #000; }
        .stage .live { position: absolute; z-index: 1; top: .6rem; left: .6rem; padding: .3rem .7rem; border: 0; border-radius: 999px;
                       background: rgba(0, 0, 0, .55); color: #fff; font: inherit; font-size: .85rem; cursor: pointer; }
        .stage .live.cannot { color: #f99; }
        figure a .badge { position: absolute; right: .25rem; bottom: .25rem; padding: .05rem .35rem; border-radius: .25rem;
                          background: rgba(0, 0, 0, .65); color: #fff; font-size: .75rem; line-height: 1.3; pointer-events: none; }
        .stage .coming { position: absolute; left: 0; right: 0; bottom: 3.5rem; text-align: center; color: #ccc; font-size: .9rem; }
        .controls a { position: fixed; z-index: 2; color: #fff; text-decoration: none; background: rgba(0, 0, 0, .5);
                      border-radius: 999px; display: flex; align-items: center; justify-content: center; }
        .controls .close { top: .6rem; right: .6rem; padding: .45rem .9rem; }
        .controls .step { top: 50%; transform: translateY(-50%); width: 3rem; height: 3rem; font-size: 2rem; line-height: 1; }
        .controls .prev { left: .6rem; }
        .controls .next { right: .6rem; }
        .viewer a:focus-visible, .viewer summary:focus-visible { outline: 3px solid #fff; outline-offset: 2px; box-shadow: 0 0 0 6px #000; }
        .info { position: fixed; z-index: 2; left: .6rem; bottom: .6rem; max-width: min(40rem, calc(100vw - 1.2rem)); max-height: 70vh;
                overflow: auto; background: rgba(24, 24, 24, .9); border-radius: 8px; padding: .4rem .8rem; font-size: .9rem; }
        .info summary { cursor: pointer; padding: .2rem 0; }
        .info h1 { font-size: 1rem; }
        .info a { color: #9cf; }
        .info .details th { color: #aaa; }

        """

    static let js = """
        "use strict";
        // Times: a <time datetime="...Z"> (written in UTC, named) is shown in the browser's time
        // zone, named ("2026-12-02 08:55:00 CET"); its title keeps the UTC text.
        (function () {
          if (!window.Intl || !Intl.DateTimeFormat.prototype.formatToParts) return;
          const format = new Intl.DateTimeFormat(undefined, { year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit",
            minute: "2-digit", second: "2-digit", hourCycle: "h23", timeZoneName: "short", numberingSystem: "latn" });
          for (const t of document.querySelectorAll("time[datetime]")) {
            const when = new Date(t.getAttribute("datetime"));
            if (isNaN(when.getTime())) continue;
            const p = {};
            for (const part of format.formatToParts(when)) p[part.type] = part.value;
            t.title = t.textContent;
            t.textContent = p.year + "-" + p.month + "-" + p.day + " " + p.hour + ":" + p.minute + ":" + p.second + " " + p.timeZoneName;
          }
        })();

        // The gallery's rows (issue 58), as phones and Immich show them: each photo at its own
        // aspect ratio (data-w x data-h, its size as shown, known before any image arrives), each
        // row filled to the width at one height near the target, the last row of a section left
        // at the target. No thumbnail is stretched: a row is no taller than its photos' thumbnails
        // cover at the screen's density (the srcset's 1x below 1.5 device pixels per CSS pixel,
        // else the 360); a photo that would hold its row far below the target (a panorama), or
        // one no larger than its thumbnail (class "small", at most one pixel per CSS pixel), is
        // drawn at the size its pixels allow in the middle of its place.
        const ptkRows = (function () {
          function facts(figure, target) {
            const img = figure.querySelector("img");
            const w = Number(figure.dataset.w), h = Number(figure.dataset.h);
            if (!img || !(w > 0 && h > 0)) return { figure: figure, img: img, aspect: 1, cap: Infinity, binds: false };
            if (figure.classList.contains("small")) return { figure: figure, img: img, aspect: w / h, cap: h, binds: false };
            const d = window.devicePixelRatio || 1;
            const side = d < 1.5 ? 180 : Number(figure.dataset.side || 360);
            // The thumbnailer's fit: within side x side, never enlarged, rounded (as WebPhoto.fitted).
            const cap = Math.max(1, Math.round(h * Math.min(1, side / Math.max(w, h)))) / d;
            return { figure: figure, img: img, aspect: w / h, cap: cap, binds: cap >= target / 2 };
          }
          // Sizes in 64ths of a pixel (the browser's layout unit), rounded down: a full row never wraps.
          function px(v) { return Math.floor(v * 64) / 64 + "px"; }
          function place(row, height) {
            for (const it of row) {
              it.figure.style.width = px(it.aspect * height);
              const a = it.figure.querySelector("a");
              if (a) a.style.height = px(height);
              if (!it.img) continue;
              const shown = Math.min(height, it.cap);
              it.img.style.width = shown < height ? px(it.aspect * shown) : "";
              it.img.style.height = shown < height ? px(shown) : "";
            }
          }
          function layout(grid) {
            // Its fractional width (clientWidth rounds 370.8 up to 371), less a tenth of a pixel.
            const width = grid.getBoundingClientRect().width - 0.1;
            if (!(width > 0)) return;
            const gap = parseFloat(getComputedStyle(grid).columnGap) || 0;
            const target = width < 480 ? 120 : 180;
            const items = Array.from(grid.children).filter(function (e) { return e.tagName === "FIGURE"; })
              .map(function (f) { return facts(f, target); });
            const full = function (n, s) { return (width - gap * (n - 1)) / s; };
            let row = [], sum = 0, cap = Infinity;
            function start(it) { row = it ? [it] : []; sum = it ? it.aspect : 0; cap = it && it.binds ? it.cap : Infinity; }
            for (const it of items) {
              const itsCap = it.binds ? it.cap : Infinity;
              const h = full(row.length + 1, sum + it.aspect), limit = Math.min(target, cap, itsCap);
              if (h > limit) { row.push(it); sum += it.aspect; cap = Math.min(cap, itsCap); continue; }
              // Full with this photo; full without it may be nearer the target (never above its caps).
              const before = row.length ? full(row.length, sum) : Infinity;
              if (row.length && before <= cap && before / target < target / h) {
                place(row, before);
                start(it);
                const alone = full(1, sum);
                if (alone <= Math.min(target, cap)) { place(row, alone); start(null); }
              } else {
                row.push(it);
                place(row, h);
                start(null);
              }
            }
            if (row.length) place(row, Math.min(target, cap));
            grid.classList.add("justified");
          }
          let laid = 0;
          function all() {
            const photos = document.getElementById("photos");
            if (!photos) return;
            laid = photos.clientWidth;
            for (const grid of photos.querySelectorAll(".grid")) layout(grid);
          }
          // Again when the width changes (a turned phone, a window resized, a scroll bar come or gone).
          function again() {
            const photos = document.getElementById("photos");
            if (photos && photos.clientWidth !== laid) all();
          }
          if ("ResizeObserver" in window) {
            const photos = document.getElementById("photos");
            if (photos) new ResizeObserver(again).observe(photos);
          } else {
            window.addEventListener("resize", again);
          }
          return all;
        })();

        // The gallery: when "More photos" comes near the screen, the next page's photos are
        // fetched and put in its place (the page's own HTML, escaped by ptkd; nothing runs); a
        // section going on from the page before joins its grid, and the rows are laid out again.
        // Back from the viewer (/#p42), pages are loaded until the photo's figure is there.
        (function () {
          if (!document.getElementById("photos")) return;
          ptkRows();
          let loading = null;
          let seen = null;
          // Appends the next page; resolves to whether there was one.
          function more() {
            if (loading) return loading;
            const link = document.getElementById("more");
            if (!link) return Promise.resolve(false);
            loading = fetch(link.href, { credentials: "same-origin" }).then(function (r) {
              if (!r.ok) throw new Error("status " + r.status);
              return r.text();
            }).then(function (html) {
              const next = new DOMParser().parseFromString(html, "text/html").getElementById("photos");
              const place = link.parentElement;
              const last = place.previousElementSibling;
              const first = next.firstElementChild;
              if (last && first && last.classList.contains("grid") && first.classList.contains("grid")) {
                for (const node of Array.from(first.childNodes)) last.append(document.importNode(node, true));
                first.remove();
              }
              for (const node of Array.from(next.childNodes)) place.before(document.importNode(node, true));
              place.remove();
              ptkRows();
              loading = null;
              watch();
              return true;
            }).catch(function () { loading = null; return false; });
            return loading;
          }
          function watch() {
            if (seen) seen.disconnect();
            const link = document.getElementById("more");
            if (!link || !("IntersectionObserver" in window)) return;
            seen = new IntersectionObserver(function (entries) {
              if (entries.some(function (e) { return e.isIntersecting; })) more();
            }, { rootMargin: "1500px" });
            seen.observe(link);
          }
          // At most 50 pages (10,000 photos) are loaded looking for it: a photo gone or no
          // longer matching the filters is not hunted through the whole library.
          let pages = 0;
          function find() {
            const m = /^#p([0-9]+)$/.exec(location.hash);
            if (!m) return;
            const figure = document.getElementById("p" + m[1]);
            if (!figure) {
              if (++pages <= 50) more().then(function (found) { if (found) find(); });
              return;
            }
            figure.scrollIntoView({ block: "center" });
            const link = figure.querySelector("a");
            if (link) link.focus({ preventScroll: true });
          }
          watch();
          find();
        })();

        // The viewer: ArrowLeft and ArrowRight go to the previous and next photo, Escape back
        // to the gallery; a swipe left or right goes to the next or previous; the next photo's
        // image is loaded before it is asked for.
        (function () {
          if (!document.body.classList.contains("viewer")) return;
          const links = { prev: document.getElementById("prev"), next: document.getElementById("next"), close: document.getElementById("close") };
          function go(link) { if (link) location.assign(link.href); }
          // A video (issue 58) the browser cannot play (HEVC in Chromium on Linux: its codec
          // is asked first; a file that fails, or plays its sound without pictures, after)
          // gives way to its poster, its facts and the download.
          const video = document.getElementById("video"), cannot = document.getElementById("cannot");
          if (video && cannot) {
            const fallback = function () {
              if (video.hidden) return;
              video.pause();
              video.removeAttribute("src");
              video.load();
              video.hidden = true;
              cannot.hidden = false;
            };
            const codecs = video.dataset.codecs;
            if (codecs && video.canPlayType('video/mp4; codecs="' + codecs + '"') === "") fallback();
            video.addEventListener("error", fallback);
            video.addEventListener("loadedmetadata", function () { if (video.videoWidth === 0) fallback(); });
          }
          // A Live Photo's motion (issue 58) plays, muted, from its start while the LIVE button
          // is hovered or the photo pressed (a touch or a mouse button held), once on a click
          // of the button (and its keys); the still comes back when it ends or is let go.
          const motion = document.getElementById("motion"), live = document.getElementById("live");
          if (motion && live) {
            const still = motion.parentElement.querySelector("img");
            let cannotPlay = false;
            const stop = function () { motion.pause(); motion.hidden = true; };
            const cannot = function () {
              cannotPlay = true;
              stop();
              live.classList.add("cannot");
              live.textContent = "LIVE: this browser cannot play its video";
            };
            const play = function () {
              if (cannotPlay) return;
              motion.hidden = false;
              motion.currentTime = 0;
              const started = motion.play();
              if (started) started.catch(function (e) { if (e.name !== "AbortError") cannot(); });
            };
            const codecs = motion.dataset.codecs;
            if (codecs && motion.canPlayType('video/mp4; codecs="' + codecs + '"') === "") cannot();
            motion.addEventListener("error", cannot);
            motion.addEventListener("ended", stop);
            live.addEventListener("mouseenter", play);
            live.addEventListener("mouseleave", stop);
            live.addEventListener("click", play);
            for (const held of [still, motion]) {
              if (!held) continue;
              held.addEventListener("pointerdown", function (e) { if (e.button === 0) play(); });
              held.addEventListener("pointerup", stop);
              held.addEventListener("pointercancel", stop);
            }
          }
          document.addEventListener("keydown", function (e) {
            if (e.altKey || e.ctrlKey || e.metaKey || e.shiftKey || e.defaultPrevented) return;
            // The player's own keys (arrows seek) while it has the focus.
            if (e.target && e.target.tagName === "VIDEO" && e.key !== "Escape") return;
            if (e.key === "ArrowLeft") go(links.prev);
            else if (e.key === "ArrowRight") go(links.next);
            else if (e.key === "Escape") go(links.close);
            else return;
            e.preventDefault();
          });
          let start = null;
          document.addEventListener("touchstart", function (e) {
            start = e.touches.length === 1 ? { x: e.touches[0].clientX, y: e.touches[0].clientY } : null;
          }, { passive: true });
          document.addEventListener("touchend", function (e) {
            if (!start || e.changedTouches.length !== 1) return;
            const dx = e.changedTouches[0].clientX - start.x, dy = e.changedTouches[0].clientY - start.y;
            start = null;
            // Not while zoomed in: then a finger moves the photo.
            if (window.visualViewport && window.visualViewport.scale > 1.01) return;
            if (Math.abs(dx) > 50 && Math.abs(dx) > Math.abs(dy)) go(dx < 0 ? links.next : links.prev);
          }, { passive: true });
          const next = links.next;
          if (next && next.dataset.src) {
            const image = new Image();
            image.decoding = "async";
            if (next.dataset.srcset) { image.sizes = next.dataset.sizes || "100vw"; image.srcset = next.dataset.srcset; }
            image.src = next.dataset.src;
          }
        })();

        // The upload page: each chosen or dropped file is sent as the body of its own
        // POST /upload (one at a time), with a progress bar and the receiver's answer.
        (function () {
          const input = document.getElementById("files");
          if (!input) return;
          const csrf = document.querySelector('meta[name="csrf-token"]').content;
          const queue = document.getElementById("queue");
          const drop = document.getElementById("drop");
          const waiting = [];
          let busy = false;

          function add(file) {
            const li = document.createElement("li");
            const name = document.createElement("span");
            name.className = "file";
            name.textContent = file.name;
            const status = document.createElement("span");
            status.className = "status";
            status.textContent = "waiting";
            const bar = document.createElement("progress");
            bar.max = file.size || 1;
            bar.value = 0;
            li.append(name, status, bar);
            queue.append(li);
            waiting.push({ file, li, status, bar });
            next();
          }

          // The type a file's first bytes say (as ptk-send sniffs it), so that a photo whose
          // name has no ending, or the wrong one, is sent as what it is; "" for none of them.
          function sniff(head) {
            const b = new Uint8Array(head);
            const starts = (sig) => sig.every((v, i) => b[i] === v);
            if (starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])) return "image/png";
            if (starts([0xFF, 0xD8, 0xFF])) return "image/jpeg";
            if (b.length >= 12 && String.fromCharCode(b[4], b[5], b[6], b[7]) === "ftyp") {
              const brand = String.fromCharCode(b[8], b[9], b[10], b[11]);
              if (["heic", "heix", "heim", "heis", "hevc", "hevx"].includes(brand)) return "image/heic";
              if (["mif1", "msf1"].includes(brand)) return "image/heif";
              if (brand === "qt  ") return "video/quicktime";
              if (["isom", "iso2", "iso4", "iso5", "iso6", "mp41", "mp42", "avc1", "M4V ", "3gp4", "3gp5", "3gp6", "dash"].includes(brand)) return "video/mp4";
            }
            return "";
          }

          function next() {
            if (busy || waiting.length === 0) return;
            busy = true;
            const item = waiting.shift();
            item.file.slice(0, 12).arrayBuffer().then(sniff, () => "").then((type) => send(item, type));
          }

          function send(item, type) {
            const xhr = new XMLHttpRequest();
            xhr.open("POST", "/upload?name=" + encodeURIComponent(item.file.name));
            xhr.setRequestHeader("X-CSRF-Token", csrf);
            xhr.setRequestHeader("Content-Type", "application/octet-stream");
            if (item.file.lastModified) xhr.setRequestHeader("X-Last-Modified", String(item.file.lastModified));
            if (type) xhr.setRequestHeader("X-Photo-Type", type);
            item.status.textContent = "sending";
            xhr.upload.onprogress = function (e) { if (e.lengthComputable) { item.bar.max = e.total; item.bar.value = e.loaded; } };
            xhr.onload = function () {
              let answer = {};
              try { answer = JSON.parse(xhr.responseText); } catch (e) { answer = { message: "the receiver answered " + xhr.status }; }
              if (xhr.status === 200) {
                item.li.className = "saved";
                item.bar.value = item.bar.max;
                item.status.textContent = answer.duplicate ? "already kept as " + answer.name : "saved as " + answer.name;
              } else {
                item.li.className = "refused";
                item.status.textContent = "refused: " + (answer.message || ("status " + xhr.status));
              }
              busy = false;
              next();
            };
            xhr.onerror = function () {
              item.li.className = "refused";
              item.status.textContent = "failed: the connection to the receiver broke";
              busy = false;
              next();
            };
            xhr.send(item.file);
          }

          input.addEventListener("change", function () {
            for (const f of input.files) add(f);
            input.value = "";
          });
          ["dragenter", "dragover"].forEach(function (t) {
            drop.addEventListener(t, function (e) { e.preventDefault(); drop.classList.add("over"); });
          });
          ["dragleave", "drop"].forEach(function (t) {
            drop.addEventListener(t, function (e) { e.preventDefault(); drop.classList.remove("over"); });
          });
          drop.addEventListener("drop", function (e) { for (const f of e.dataTransfer.files) add(f); });
        })();

        """
}
