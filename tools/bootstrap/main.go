// Command bootstrap is the one step that holds the admin URLs (decisions.md, "Running it").
// It creates the database, each service's Postgres role (with a generated password) and
// schema, and each service's and the zone's broker user with its permissions, and writes
// each one's own credentials (<NAME>_DATABASE_URL, <NAME>_AMQP_URL) to
// DATA_DIR/secrets/<name>.env (mode 0600, folder 0700). A credential given in the
// environment is left alone; an existing file is kept, so restarts keep their passwords.
//
//	bootstrap                 everything, for make run (DATABASE_URL, AMQP_URL, DATA_DIR, ZONE_ID)
//	bootstrap -test-users     only the broker users `make test` uses ("test.tori.<name>",
//	                          password cached per machine, or TEST_AMQP_PASSWORD), once per run
//	bootstrap -offline        only the files, reaching nothing (BOOTSTRAP_BROKER=definitions):
//	                          scripts/compose-secrets.sh and scripts/k8s-secrets.sh
//	BOOTSTRAP_CREDENTIALS=env the in-cluster run of compose and Kubernetes: the roles are made
//	                          with the passwords of the URLs in the environment (BOOTSTRAP_BROKER=none)
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"tori.dev/pkg/buildinfo"
)

func main() {
	if buildinfo.Asked(os.Args[1:]) {
		fmt.Println(buildinfo.Line("bootstrap"))
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	testUsers := flag.Bool("test-users", false, "make only the broker users of `make test`")
	offline := flag.Bool("offline", false, "only write the credential files and the broker's definitions (compose, Kubernetes)")
	flag.Parse()
	var err error
	if *testUsers {
		err = ensureTestUsers(ctx)
	} else {
		s := loadSettings()
		s.Offline = *offline
		if err = s.check(); err == nil {
			err = bootstrap(ctx, s)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bootstrap:", err)
		os.Exit(1)
	}
}
