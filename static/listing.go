package static

import (
	"html"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/riptide-http/riptide"
)

// list writes an HTML listing of the directory rel (Options.Browse):
// names sorted, directories with a trailing slash, hidden names left out
// unless DotFiles. Names are escaped for the link and for the text.
func (h *Handler) list(c *riptide.Ctx, rel string) {
	f, err := h.open(rel)
	if err != nil {
		notFound(c)
		return
	}
	ents, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		notFound(c)
		return
	}
	slices.SortFunc(ents, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	var b strings.Builder
	b.WriteString("<!doctype html>\n<meta name=\"viewport\" content=\"width=device-width\">\n<pre>\n")
	for _, e := range ents {
		name := e.Name()
		if !h.opt.DotFiles && strings.HasPrefix(name, ".") {
			continue
		}
		if e.IsDir() {
			name += "/"
		}
		u := url.URL{Path: name}
		b.WriteString("<a href=\"" + html.EscapeString(u.String()) + "\">" + html.EscapeString(name) + "</a>\n")
	}
	b.WriteString("</pre>\n")
	c.SetContentType("text/html; charset=utf-8")
	c.SetHeader("Cache-Control", "no-cache")
	c.SetStatus(http.StatusOK)
	c.WriteString(b.String())
}
