package ecosystem

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/gorilla/mux"
)

func gorillaRouter() http.Handler {
	r := mux.NewRouter()
	r.HandleFunc("/articles/{category}/{id:[0-9]+}", func(w http.ResponseWriter, r *http.Request) {
		v := mux.Vars(r)
		fmt.Fprintf(w, "%s/%s", v["category"], v["id"])
	}).Methods("GET")
	r.HandleFunc("/search", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "q=%s", r.URL.Query().Get("q"))
	}).Queries("q", "{q}")
	r.Host("api.example.com").Path("/host").HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "host %s", mux.Vars(r))
	})
	s := r.PathPrefix("/v1").Subrouter()
	s.HandleFunc("/items", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
		fmt.Fprint(w, "created")
	}).Methods("POST").Headers("X-Token", "secret")
	// An encoded slash must reach the route as RawPath says.
	r.UseEncodedPath()
	r.HandleFunc("/files/{name}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "file %s", mux.Vars(r)["name"])
	})
	return r
}

func TestGorillaMux(t *testing.T) {
	eachServer(t, func(t *testing.T, serve func(*testing.T, http.Handler) string) {
		base := serve(t, gorillaRouter())
		c := client(t)
		do(t, c, "GET", base+"/articles/tech/123", "").expect(t, 200, "tech/123")
		do(t, c, "GET", base+"/articles/tech/abc", "").expect(t, 404, "404 page not found\n")
		do(t, c, "DELETE", base+"/articles/tech/1", "").expect(t, 405, "")
		do(t, c, "GET", base+"/search?q=riptide", "").expect(t, 200, "q=riptide")
		do(t, c, "GET", base+"/host", "", "Host", "api.example.com").expect(t, 200, "host map[]")
		do(t, c, "GET", base+"/host", "").expect(t, 404, "404 page not found\n")
		do(t, c, "POST", base+"/v1/items", "x", "X-Token", "secret").expect(t, 201, "created")
		do(t, c, "POST", base+"/v1/items", "x").expect(t, 404, "404 page not found\n")
		do(t, c, "GET", base+"/files/a%2Fb", "").expect(t, 200, "file a%2Fb")
	})
}
