package demo

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
)

// client is a minimal MCP client over a child process's stdio: one request at a time, which is
// all the demo needs. It speaks the 2025-11-25 handshake like most hosts today.
type client struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Reader
	nextID int
	mu     sync.Mutex
}

// startClient starts argv and performs the initialize handshake.
func startClient(ctx context.Context, argv []string, dir string, stderr io.Writer) (*client, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	c := &client{cmd: cmd, stdin: stdin, out: bufio.NewReaderSize(stdout, 1<<20)}
	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := c.call("initialize", map[string]any{
		"protocolVersion": "2025-11-25",
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "runlens-demo", "version": "1"},
	}, &init); err != nil {
		c.Close()
		return nil, fmt.Errorf("initialize: %w", err)
	}
	if err := c.notify("notifications/initialized"); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// toolResult is the part of a tools/call result the demo reads.
type toolResult struct {
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
	Content           []struct {
		Text string `json:"text"`
	} `json:"content"`
}

// callTool calls a tool and decodes its structured answer into out. A tool error comes back as
// an error carrying the tool's message.
func (c *client) callTool(name string, args map[string]any, out any) error {
	var res toolResult
	if err := c.call("tools/call", map[string]any{"name": name, "arguments": args}, &res); err != nil {
		return err
	}
	body := res.StructuredContent
	if len(body) == 0 && len(res.Content) > 0 {
		body = json.RawMessage(res.Content[0].Text)
	}
	if res.IsError {
		return fmt.Errorf("%s: %s", name, body)
	}
	return json.Unmarshal(body, out)
}

func (c *client) call(method string, params any, out any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nextID++
	id := c.nextID
	if err := c.write(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		return err
	}
	for {
		line, err := c.out.ReadBytes('\n')
		if err != nil {
			return fmt.Errorf("read %s response: %w", method, err)
		}
		var msg struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(line, &msg); err != nil {
			return fmt.Errorf("decode %s response: %w", method, err)
		}
		if msg.ID == nil || *msg.ID != id {
			continue // a notification (progress, log) or a stray line
		}
		if msg.Error != nil {
			return fmt.Errorf("%s: %d %s", method, msg.Error.Code, msg.Error.Message)
		}
		return json.Unmarshal(msg.Result, out)
	}
}

func (c *client) notify(method string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.write(map[string]any{"jsonrpc": "2.0", "method": method})
}

func (c *client) write(msg any) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	_, err = c.stdin.Write(append(b, '\n'))
	return err
}

// Close ends the session the way a host does: close stdin and wait for a clean exit.
func (c *client) Close() error {
	errClose := c.stdin.Close()
	errWait := c.cmd.Wait()
	return errors.Join(errClose, errWait)
}
