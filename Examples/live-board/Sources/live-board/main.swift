// Starts the live board: `swift run live-board [--port 8080] [--db live-board.sqlite | --memory]`.
// `--sockets-per-address N` (64 by default, `0`: no limit) bounds the WebSockets one client address holds
// open, `--sockets-per-user N` (16) those of one user; load runs from one address lift the first.
// `--commits per-edit` gives each write a transaction of its own (group commit is the default). Several
// instances on PostgreSQL are the package `Examples/live-board-cluster`.

import LiveBoard
import Logging

var path: String? = "live-board.sqlite"
let command = ServerCommand(CommandLine.arguments.dropFirst(), usage: "live-board [--db FILE | --memory]") {
  argument, rest in
  switch argument {
  case "--db": path = rest.next() ?? path
  case "--memory": path = nil
  default: return false
  }
  return true
}

var logger = Logger(label: "live-board")
logger.logLevel = .warning
try await command.serve(
  try Board(path: path, commits: command.commits), store: path ?? "in memory", logger: logger)
