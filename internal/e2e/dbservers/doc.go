// Package dbservers starts throwaway database servers for end-to-end tests: a MariaDB server
// and a Redis server, each on a free loopback port with its files in the test's temporary
// folder, stopped when the test ends. The programs come from the machine (Debian's
// mariadb-server and redis-server packages; .ci/install-deps installs them). When they are
// missing the test is skipped with the install hint, or fails under CI=true, where their
// absence is a broken build.
package dbservers
