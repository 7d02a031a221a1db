// Package manifests checks the committed deployment files offline, as `make test` runs it:
// each Kubernetes manifest strict-decodes into the Kubernetes API's own Go types (an unknown
// or misspelt field fails, as `kubectl apply --validate=strict` would), every control-plane
// workload meets the restricted Pod Security profile with pinned images and /readyz probes,
// has a PodDisruptionBudget and NetworkPolicies, and docker-compose.yml validates against
// the compose specification's JSON schema (the copy compose-go embeds), pulls only pinned
// images, has a healthcheck on every long-running service, and runs the object store deploys
// and the zone agent need (compose_services_test.go). Nothing is downloaded: the types and
// the schema come with the Go modules.
package manifests
