// The fan-out run's second floor: what SwiftNIO itself costs per message on this machine. A NIO server on one
// event loop writes one pre-framed message to each of N loopback clients per round, at a fixed rate, as a
// live-board instance's broadcast does (`writeAndFlush` on each channel, no handlers), and prints the
// process's CPU per message. The clients are write-floor's reader (`write-floor --read PORT`), pinned to
// another CPU; run this pinned as the instances are (fanout_load.py does both).
//
//   nio-floor --reader PATH --clients N --rounds R --rate PER_SECOND --bytes SIZE [--reader-cpu 1]
//
// Prints one JSON object: clients, messages, bytes, cpu_us_per_message (user + system time of the rounds).

import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

struct Options {
  var reader = ""
  var clients = 333
  var rounds = 200
  var rate = 20
  var bytes = 200
  var readerCPU = 1

  init(_ arguments: [String]) throws {
    var rest = arguments[...]
    while let name = rest.popFirst() {
      guard let value = rest.popFirst() else { throw Usage() }
      switch name {
      case "--reader": reader = value
      case "--clients": clients = try Self.count(value)
      case "--rounds": rounds = try Self.count(value)
      case "--rate": rate = try Self.count(value)
      case "--bytes": bytes = try Self.count(value, from: 4)  // a frame's header and at least one byte
      case "--reader-cpu": readerCPU = try Self.count(value, from: 0)
      default: throw Usage()
      }
    }
    guard !reader.isEmpty else { throw Usage() }
  }

  private static func count(_ text: String, from low: Int = 1) throws -> Int {
    guard let value = Int(text), value >= low else { throw Usage() }
    return value
  }
}

struct Usage: Error, CustomStringConvertible {
  var description: String {
    "usage: nio-floor --reader WRITE_FLOOR --clients N --rounds R --rate R --bytes B [--reader-cpu C]"
  }
}

/// User + system CPU time of this process, in microseconds.
func cpuMicroseconds() -> Double {
  var usage = rusage()
  #if canImport(Glibc)
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
  #else
    getrusage(RUSAGE_SELF, &usage)
  #endif
  let user = Double(usage.ru_utime.tv_sec) * 1e6 + Double(usage.ru_utime.tv_usec)
  return user + Double(usage.ru_stime.tv_sec) * 1e6 + Double(usage.ru_stime.tv_usec)
}

/// Collects the accepted connections; the rounds start once there are `expected` of them.
final class Accepted: Sendable {
  private let state = NIOLockedValueBox<(channels: [any Channel], waiter: CheckedContinuation<Void, Never>?)>(
    ([], nil))
  let expected: Int

  init(expected: Int) { self.expected = expected }

  func add(_ channel: any Channel) {
    let waiter = state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
      state.channels.append(channel)
      guard state.channels.count == expected else { return nil }
      defer { state.waiter = nil }
      return state.waiter
    }
    waiter?.resume()
  }

  func all() async -> [any Channel] {
    await withCheckedContinuation { continuation in
      let ready = state.withLockedValue { state in
        if state.channels.count < expected { state.waiter = continuation }
        return state.channels.count >= expected
      }
      if ready { continuation.resume() }
    }
    return state.withLockedValue(\.channels)
  }
}

/// What went wrong in a run, said on standard error before exiting 1.
struct Failure: Error, CustomStringConvertible {
  let description: String
}

/// One run: accepts the reader's clients, writes the rounds, and returns the JSON line.
func run(_ options: Options) async throws -> String {
  let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
  let loop = group.next()
  let accepted = Accepted(expected: options.clients)
  let server = try await ServerBootstrap(group: group)
    .serverChannelOption(.backlog, value: 4096)
    .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
    .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
    .childChannelInitializer { channel in
      accepted.add(channel)
      return channel.eventLoop.makeSucceededVoidFuture()
    }
    .bind(host: "127.0.0.1", port: 0).get()
  guard let port = server.localAddress?.port else { throw Failure(description: "the server has no port") }

  let reader = Process()
  reader.executableURL = URL(fileURLWithPath: options.reader)
  reader.arguments = [
    "--read", "\(port)", "--clients", "\(options.clients)", "--rounds", "\(options.rounds)",
    "--bytes", "\(options.bytes)", "--reader-cpu", "\(options.readerCPU)",
  ]
  reader.standardOutput = Pipe()  // its one "connected" line
  try reader.run()
  let channels = await accepted.all()

  // A text frame (FIN, 2-byte length when needed) of `bytes` bytes in all, as the board's frames are.
  var frame = ByteBuffer()
  let header = options.bytes - 2 < 126 ? 2 : 4
  frame.writeInteger(UInt8(0x81))
  if header == 2 {
    frame.writeInteger(UInt8(options.bytes - 2))
  } else {
    frame.writeInteger(UInt8(126))
    frame.writeInteger(UInt16(options.bytes - 4))
  }
  frame.writeRepeatingByte(UInt8(ascii: "x"), count: options.bytes - header)

  let before = cpuMicroseconds()
  let interval = Duration.nanoseconds(1_000_000_000 / options.rate)
  let clock = ContinuousClock()
  var next = clock.now
  for _ in 0..<options.rounds {
    try await loop.submit { [frame] in
      for channel in channels { channel.writeAndFlush(frame, promise: nil) }
    }.get()
    next += interval
    try await clock.sleep(until: next)
  }
  let used = cpuMicroseconds() - before
  reader.waitUntilExit()
  try await server.close().get()
  try await group.shutdownGracefully()
  guard reader.terminationStatus == 0 else {
    throw Failure(description: "the reader did not receive every byte")
  }
  let messages = options.clients * options.rounds
  return "{\"clients\": \(options.clients), \"messages\": \(messages), \"bytes\": \(options.bytes), "
    + "\"cpu_us_per_message\": \(String(format: "%.2f", used / Double(messages)))}"
}

do {
  print(try await run(try Options(Array(CommandLine.arguments.dropFirst()))))
} catch let usage as Usage {
  FileHandle.standardError.write(Data("\(usage)\n".utf8))
  exit(2)
} catch {
  FileHandle.standardError.write(Data("nio-floor: \(error)\n".utf8))
  exit(1)
}
