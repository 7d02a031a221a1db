// Package contract is the module of the rules that cross a process boundary: what one
// process writes and another reads, or what one refuses and another must agree to refuse.
// Each rule is written here once and imported by every service, the command line and the
// zone agent; the console's copies are generated from it (tools/contractgen), so no process
// re-types a rule and none can drift from another.
//
// What belongs here: names and their patterns (names: slugs, custom hostnames and their
// verification records, environment variables' names, bearer tokens' prefixes, previews'
// names, ids and hosts), limits and
// deadlines every party holds to (limits: the release job's, the logs' reads), the
// payment-failure hold's stages, days, notice names and JSON view (billinghold), the API's
// time format (apitime), the customer metrics' histogram bounds and status classes
// (appmetrics), the address ranges no tenant's traffic reaches (netrange), and who may
// do what: team roles, token scopes and the one table of routes with the least of each
// (access). Each is
// a value or a pure function, with table tests.
//
// What does not: anything one process alone decides (it stays in that service's domain
// package), I/O of any kind, configuration, and every dependency beyond the standard
// library: each package here is imported by processes that share nothing else, so it must
// cost them nothing. The bus's messages are the other half of the contract and live in
// tori.dev/proto. docs/rules.md names, for each rule, the one place it is written;
// its test fails when a rule's literal appears anywhere else.
package contract
