package riptide_test

// Node.js's built-in http2 module as a real HTTP/2 client, h2c (prior
// knowledge) and TLS (ALPN), against every target.

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// nodeH2Script connects with http2.connect (h2c prior knowledge for http://,
// ALPN h2 for https://, trusting the PEM in RIPTIDE_CA), then sends a GET /,
// a POST / echo of 100,000 bytes and 20 concurrent GETs on the one session,
// and prints what it saw as JSON.
const nodeH2Script = `
const http2 = require('node:http2');
const url = process.argv.at(-1); // node -e: argv is [node, url]
const opts = {};
if (url.startsWith('https:')) opts.ca = process.env.RIPTIDE_CA;
const session = http2.connect(url, opts);
session.on('error', (e) => { console.error(e); process.exit(2); });
function request(headers, body) {
  return new Promise((resolve, reject) => {
    const req = session.request(headers);
    let status = 0;
    const chunks = [];
    req.on('response', (h) => { status = h[':status']; });
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve({status, body: Buffer.concat(chunks)}));
    req.on('error', reject);
    req.end(body);
  });
}
(async () => {
  const out = {};
  const g = await request({':method': 'GET', ':path': '/'});
  out.get_status = g.status; out.get_body = g.body.toString();
  const payload = Buffer.alloc(100000, 'x');
  const p = await request({':method': 'POST', ':path': '/'}, payload);
  out.post_status = p.status; out.post_echo = p.body.equals(payload);
  const many = await Promise.all(Array.from({length: 20}, () => request({':method': 'GET', ':path': '/'})));
  out.concurrent_ok = many.filter((r) => r.status === 200 && r.body.toString() === 'Hello, World!').length;
  out.alpn = session.alpnProtocol;
  out.encrypted = session.encrypted;
  out.type = session.type; // 1 = client session
  session.close();
  console.log(JSON.stringify(out));
})().catch((e) => { console.error(e); process.exit(1); });
`

func TestH2Node(t *testing.T) {
	t.Parallel()
	node, err := exec.LookPath("node")
	if err != nil {
		needTool(t, "node not installed (apt-get install nodejs); needed for the Node http2 client test")
	}
	_, certPEM := h2TestCert(t)
	forEachH2(t, func(t *testing.T, in *h2Instance) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, "-e", nodeH2Script, in.url("/"))
		cmd.Env = append(os.Environ(), "RIPTIDE_CA="+string(certPEM))
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("node: %v\n%s%s", err, out, stderr.String())
		}
		var r struct {
			GetStatus    int    `json:"get_status"`
			GetBody      string `json:"get_body"`
			PostStatus   int    `json:"post_status"`
			PostEcho     bool   `json:"post_echo"`
			ConcurrentOK int    `json:"concurrent_ok"`
			ALPN         string `json:"alpn"`
			Encrypted    bool   `json:"encrypted"`
		}
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatalf("node output %q: %v", out, err)
		}
		// Node reports "h2c" for a cleartext session and the negotiated
		// ALPN protocol ("h2") over TLS: either way the session is HTTP/2,
		// which http2.connect would have failed without.
		wantALPN := "h2c"
		if in.tls {
			wantALPN = "h2"
		}
		if r.ALPN != wantALPN || r.Encrypted != in.tls {
			t.Errorf("node session: alpnProtocol %q encrypted %v, want %q %v", r.ALPN, r.Encrypted, wantALPN, in.tls)
		}
		if r.GetStatus != 200 || r.GetBody != h2HelloBody {
			t.Errorf("node GET: %d %q, want 200 %q", r.GetStatus, r.GetBody, h2HelloBody)
		}
		if r.PostStatus != 200 || !r.PostEcho {
			t.Errorf("node POST echo: %d, echoed=%v, want 200 with the 100000 bytes sent", r.PostStatus, r.PostEcho)
		}
		if r.ConcurrentOK != 20 {
			t.Errorf("node concurrent GETs: %d of 20 answered 200 %q", r.ConcurrentOK, h2HelloBody)
		}
	})
}
