// Starts one instance of the live board on PostgreSQL, one of several behind nginx (see cluster.sh):
// `board-instance --postgres HOST:PORT/DATABASE [--pg-user NAME] [--checkpoint VERSIONS] [--port 8081]`,
// with the board's `--sockets-per-address N`, `--sockets-per-user N` and `--commits group|per-edit`.

import BoardCluster
import LiveBoard
import Logging

var settings = PostgresSettings()
var checkpointInterval = 500
let command = ServerCommand(
  CommandLine.arguments.dropFirst(),
  usage: "board-instance --postgres HOST:PORT/DATABASE [--pg-user NAME] [--checkpoint VERSIONS]"
) { argument, rest in
  switch argument {
  case "--postgres":
    // HOST:PORT/DATABASE
    let parts = (rest.next() ?? "").split(separator: "/", maxSplits: 1)
    let hostPort = parts.first.map { $0.split(separator: ":") } ?? []
    if let host = hostPort.first { settings.host = String(host) }
    if hostPort.count > 1, let number = Int(hostPort[1]) { settings.port = number }
    if parts.count > 1 { settings.database = String(parts[1]) }
  case "--pg-user": settings.user = rest.next() ?? settings.user
  case "--checkpoint": checkpointInterval = rest.next().flatMap(Int.init) ?? checkpointInterval
  default: return false
  }
  return true
}

var logger = Logger(label: "live-board")
logger.logLevel = .warning
let board = try await ClusterBoard.open(
  settings, checkpointInterval: checkpointInterval, commits: command.commits, logger: logger)
try await command.serve(
  board, store: "PostgreSQL \(settings.host):\(settings.port)/\(settings.database)", logger: logger)
