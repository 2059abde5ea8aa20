// Starts the live board: `swift run live-board [--port 8080] [--db live-board.sqlite | --memory]`.

import Foundation
import Hummingbird
import LiveBoard
import Logging

var port = 8080
var path: String? = "live-board.sqlite"
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
  switch argument {
  case "--port": port = arguments.next().flatMap(Int.init) ?? port
  case "--db": path = arguments.next() ?? path
  case "--memory": path = nil
  default:
    print("usage: live-board [--port N] [--db FILE | --memory]")
    exit(2)
  }
}

let board = try Board(path: path)
var logger = Logger(label: "live-board")
logger.logLevel = .warning
let store = path ?? "in memory"
let application = makeApplication(board: board, port: port, logger: logger) { port in
  let line = "live-board: listening; open http://127.0.0.1:\(port)/ (stream \(board.stream), \(store))\n"
  FileHandle.standardOutput.write(Data(line.utf8))
}
try await application.runService()
