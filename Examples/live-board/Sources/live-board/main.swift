// Starts the live board: `swift run live-board [--port 8080] [--db live-board.sqlite | --memory]`, or one of
// several instances on PostgreSQL: `live-board --port 8081 --postgres HOST:PORT/DATABASE [--pg-user NAME]
// [--checkpoint VERSIONS]` (see cluster.sh). `--sockets-per-address N` (64 by default, `0`: no limit) bounds
// the WebSockets one client address holds open, `--sockets-per-user N` (16) those of one user; load runs
// from one address lift the first.

import Foundation
import Hummingbird
import LiveBoard
import Logging

var port = 8080
var path: String? = "live-board.sqlite"
var postgres: PostgresSettings?
var checkpointInterval = 500
var limits = ConnectionLimits()
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
  switch argument {
  case "--port": port = arguments.next().flatMap(Int.init) ?? port
  case "--db": path = arguments.next() ?? path
  case "--memory": path = nil
  case "--postgres":
    // HOST:PORT/DATABASE
    var settings = postgres ?? PostgresSettings()
    let address = arguments.next() ?? ""
    let parts = address.split(separator: "/", maxSplits: 1)
    let hostPort = parts.first.map { $0.split(separator: ":") } ?? []
    if let host = hostPort.first { settings.host = String(host) }
    if hostPort.count > 1, let number = Int(hostPort[1]) { settings.port = number }
    if parts.count > 1 { settings.database = String(parts[1]) }
    postgres = settings
  case "--sockets-per-address":
    let limit = arguments.next().flatMap(Int.init) ?? limits.webSocketsPerAddress
    limits.webSocketsPerAddress = limit > 0 ? limit : .max
  case "--sockets-per-user":
    let limit = arguments.next().flatMap(Int.init) ?? limits.webSocketsPerUser
    limits.webSocketsPerUser = limit > 0 ? limit : .max
  case "--checkpoint": checkpointInterval = arguments.next().flatMap(Int.init) ?? checkpointInterval
  case "--pg-user":
    var settings = postgres ?? PostgresSettings()
    settings.user = arguments.next() ?? settings.user
    postgres = settings
  default:
    print(
      "usage: live-board [--port N] [--db FILE | --memory | --postgres HOST:PORT/DATABASE [--pg-user NAME]"
        + " [--checkpoint VERSIONS]] [--sockets-per-address N] [--sockets-per-user N]")
    exit(2)
  }
}

var logger = Logger(label: "live-board")
logger.logLevel = .warning

/// Serves `board` until the process is stopped.
func serve(_ board: some BoardStore, store: String, port: Int, limits: ConnectionLimits, logger: Logger)
  async throws
{
  let application = makeApplication(board: board, port: port, logger: logger, limits: limits) { port in
    let line = "live-board: listening; open http://127.0.0.1:\(port)/ (stream \(board.stream), \(store))\n"
    FileHandle.standardOutput.write(Data(line.utf8))
  }
  try await application.runService()
}

if let postgres {
  let board = try await ClusterBoard.open(postgres, checkpointInterval: checkpointInterval, logger: logger)
  try await serve(
    board, store: "PostgreSQL \(postgres.host):\(postgres.port)/\(postgres.database)", port: port,
    limits: limits, logger: logger)
} else {
  try await serve(
    try Board(path: path), store: path ?? "in memory", port: port, limits: limits, logger: logger)
}
