package dbservers

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
)

// One real round trip through a started MariaDB: the Go driver logs in through DSN over TCP as
// the password user, writes a row into the database and reads it back.
func TestStartMariaDB(t *testing.T) {
	m := StartMariaDB(t)
	if host, _, err := net.SplitHostPort(m.Addr); err != nil || host != "127.0.0.1" {
		t.Fatalf("Addr = %q, want 127.0.0.1:port", m.Addr)
	}
	if want := fmt.Sprintf("%s:%s@tcp(%s)/%s?parseTime=true", m.User, m.Password, m.Addr, m.Database); m.DSN() != want {
		t.Fatalf("DSN() = %q, want %q", m.DSN(), want)
	}
	db, err := sql.Open("mysql", m.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, q := range []string{"CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))", "INSERT INTO t VALUES (1, 'round trip')"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var got string
	if err := db.QueryRowContext(ctx, "SELECT v FROM t WHERE id = 1").Scan(&got); err != nil || got != "round trip" {
		t.Fatalf("read back %q, %v; want %q", got, err, "round trip")
	}
}

// One real round trip through a started Redis: SET, then GET returns the value.
func TestStartRedis(t *testing.T) {
	r := StartRedis(t)
	c, err := net.DialTimeout("tcp", r.Addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$10\r\nround trip\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"); err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(c)
	var lines []string
	for range 3 {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatalf("after %q: %v", lines, err)
		}
		lines = append(lines, strings.TrimRight(line, "\r\n"))
	}
	if want := []string{"+OK", "$10", "round trip"}; strings.Join(lines, "|") != strings.Join(want, "|") {
		t.Fatalf("replies %q, want %q", lines, want)
	}
}
