// The command line every server of the board shares: the port and the connection limits, read here; the
// store's own options, read by the executable that names the store.

import Foundation
import Hummingbird
import SimpleSourceHummingbird
import Logging

/// A board server's command line: `--port N`, `--sockets-per-address N` and `--sockets-per-user N` (`0`: no
/// limit), `--ping SECONDS` (how often each WebSocket is pinged; 30 by default), `--commits group|per-edit` (how the store commits writes; group by default), and the options of
/// the executable's store, which it reads itself.
public struct ServerCommand: Sendable {
  /// The port to listen on (8080 by default).
  public var port = 8080
  /// The connection limits, with the two set from the command line.
  public var limits = ConnectionLimits()
  /// How the store commits writes.
  public var commits = CommitMode.group

  /// Reads `arguments` (without the executable's name). Each argument this type does not know is passed to
  /// `store` with the arguments after it, and must be consumed there (`true`); otherwise the usage is
  /// printed, `usage` naming the store's options, and the process exits with status 2.
  /// - Complexity: O(arguments).
  public init(
    _ arguments: some Sequence<String>, usage: String,
    store: (_ argument: String, _ rest: inout IndexingIterator<[String]>) -> Bool
  ) {
    var rest = Array(arguments).makeIterator()
    while let argument = rest.next() {
      switch argument {
      case "--port": port = rest.next().flatMap(Int.init) ?? port
      case "--sockets-per-address":
        limits.webSocketsPerAddress = Self.limit(rest.next(), else: limits.webSocketsPerAddress)
      case "--sockets-per-user":
        limits.webSocketsPerUser = Self.limit(rest.next(), else: limits.webSocketsPerUser)
      case "--ping":
        guard let seconds = rest.next().flatMap(Int.init), seconds > 0 else { Self.exit(usage: usage) }
        limits.webSocketPing = .seconds(seconds)
      case "--commits":
        guard let mode = rest.next().flatMap(CommitMode.init(rawValue:)) else { Self.exit(usage: usage) }
        commits = mode
      default:
        guard store(argument, &rest) else { Self.exit(usage: usage) }
      }
    }
  }

  /// Prints the usage, `usage` naming the store's options, and exits with status 2.
  private static func exit(usage: String) -> Never {
    print(
      "usage: \(usage) [--port N] [--sockets-per-address N] [--sockets-per-user N] [--ping SECONDS] [--commits group|per-edit]"
    )
    Foundation.exit(2)
  }

  /// A limit read from the command line: `0` lifts it.
  private static func limit(_ text: String?, else current: Int) -> Int {
    guard let number = text.flatMap(Int.init) else { return current }
    return number > 0 ? number : .max
  }

  /// Serves `board` until the process is stopped, printing its address once it listens; `store` says
  /// where the board is kept.
  public func serve(_ board: some BoardStore, store: String, logger: Logger) async throws {
    // As many descriptors as the system allows this process, less a reserve: past them new connections
    // are closed as accepted, never left waiting on an accept that fails.
    var limits = limits
    limits.connections = ConnectionLimits.raiseDescriptorLimit() - ConnectionLimits.descriptorReserve
    // Instances of one board sign read tokens with one secret: `READ_SECRET` (a new one per process without it).
    let secret = ProcessInfo.processInfo.environment["READ_SECRET"].map { Array($0.utf8) }
    let application = makeApplication(
      board: board, port: port, logger: logger, limits: limits, readSecret: secret
    ) { port in
      let line = "live-board: listening; open http://127.0.0.1:\(port)/ (stream \(board.stream), \(store))\n"
      FileHandle.standardOutput.write(Data(line.utf8))
    }
    try await application.runService()
  }
}
