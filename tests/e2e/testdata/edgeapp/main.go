// The app `make bench-edge` puts behind both edges: the same binary deployed as a Tori service
// (built by the zone from this source) and run as a plain process behind Caddy's
// reverse_proxy. It answers every request with a short fixed body and logs nothing per
// request, so what is measured is the path in front of it, not the app.
package main

import (
	"log"
	"net/http"
	"os"
)

var body = []byte("hello from edgeapp\n")

func main() {
	port := os.Getenv("PORT")
	if port == "" {
		port = "8080"
	}
	http.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write(body)
	})
	log.Printf("listening on 127.0.0.1:%s", port)
	log.Fatal(http.ListenAndServe("127.0.0.1:"+port, nil))
}
