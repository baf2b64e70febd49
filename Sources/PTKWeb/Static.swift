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
        .grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(150px, 1fr)); gap: .6rem; }
        figure { margin: 0; background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: .4rem; min-width: 0; }
        figure a { display: flex; align-items: center; justify-content: center; aspect-ratio: 1; overflow: hidden;
                   background: repeating-conic-gradient(#eee 0 25%, #fff 0 50%) 0 0 / 16px 16px; }
        figure img { max-width: 100%; max-height: 100%; width: auto; height: auto; }
        figcaption { font-size: .8rem; margin-top: .3rem; overflow-wrap: anywhere; }
        .stars { color: #c80; white-space: nowrap; }
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
          .grid { grid-template-columns: repeat(auto-fill, minmax(110px, 1fr)); gap: .4rem; }
        }

        """

    static let js = """
        "use strict";
        // The gallery: when "More photos" comes near the screen, the next page's photos are
        // fetched and put in its place (the page's own HTML, escaped by ptkd; nothing runs).
        (function () {
          let loading = false;
          function watch() {
            const more = document.getElementById("more");
            if (!more || !("IntersectionObserver" in window)) return;
            const seen = new IntersectionObserver(function (entries) {
              if (loading || !entries.some(function (e) { return e.isIntersecting; })) return;
              loading = true;
              seen.disconnect();
              fetch(more.href, { credentials: "same-origin" }).then(function (r) {
                if (!r.ok) throw new Error("status " + r.status);
                return r.text();
              }).then(function (html) {
                const next = new DOMParser().parseFromString(html, "text/html").getElementById("photos");
                const place = more.parentElement;
                for (const node of Array.from(next.childNodes)) place.before(document.importNode(node, true));
                place.remove();
                loading = false;
                watch();
              }).catch(function () { loading = false; });
            }, { rootMargin: "1500px" });
            seen.observe(more);
          }
          watch();
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
