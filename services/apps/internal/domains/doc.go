// Package domains is custom hostnames of static apps: what a hostname may be, the TXT
// record that proves control of it, the plan's limit, and the rule that an active hostname
// belongs to one app across all accounts while pending claims never block anyone.
package domains
