// SHA-256 and HMAC-SHA-256 (FIPS 180-4, RFC 2104), for read tokens and entity tags: the package has no
// dependency, and Foundation on Linux has no digest.

import Foundation

/// SHA-256 of bytes, and HMAC-SHA-256 with a key (package-internal: read tokens and entity tags).
package enum SHA256 {
  /// The first 32 bits of the fractional parts of the cube roots of the first 64 primes (FIPS 180-4,
  /// 4.2.2), computed once; the test vectors check every bit of them.
  private static let roundConstants: [UInt32] = primes(64).map { fraction(cbrt(Double($0))) }
  /// The first 32 bits of the fractional parts of the square roots of the first 8 primes (5.3.3).
  private static let initialHash: [UInt32] = primes(8).map { fraction(Double($0).squareRoot()) }

  private static func primes(_ count: Int) -> [Int] {
    var found: [Int] = []
    var candidate = 2
    while found.count < count {
      if !found.contains(where: { candidate % $0 == 0 }) { found.append(candidate) }
      candidate += 1
    }
    return found
  }

  private static func fraction(_ value: Double) -> UInt32 {
    UInt32((value - value.rounded(.down)) * 4_294_967_296)
  }

  /// The 32-byte digest of `message`.
  /// - Complexity: O(*m*) for *m* bytes.
  package static func digest(_ message: some Collection<UInt8>) -> [UInt8] {
    var padded = Array(message)
    let bitLength = UInt64(padded.count) &* 8
    padded.append(0x80)
    while padded.count % 64 != 56 { padded.append(0) }
    for shift in stride(from: 56, through: 0, by: -8) {
      padded.append(UInt8(truncatingIfNeeded: bitLength >> shift))
    }
    var hash = initialHash
    var schedule = [UInt32](repeating: 0, count: 64)
    for block in stride(from: 0, to: padded.count, by: 64) {
      for index in 0..<16 {
        let at = block + index * 4
        schedule[index] =
          UInt32(padded[at]) << 24 | UInt32(padded[at + 1]) << 16 | UInt32(padded[at + 2]) << 8
          | UInt32(padded[at + 3])
      }
      for index in 16..<64 {
        let (early, late) = (schedule[index - 15], schedule[index - 2])
        let small0 = early.rotatedRight(7) ^ early.rotatedRight(18) ^ (early >> 3)
        let small1 = late.rotatedRight(17) ^ late.rotatedRight(19) ^ (late >> 10)
        schedule[index] = schedule[index - 16] &+ small0 &+ schedule[index - 7] &+ small1
      }
      var (a, b, c, d, e, f, g, h) = (hash[0], hash[1], hash[2], hash[3], hash[4], hash[5], hash[6], hash[7])
      for index in 0..<64 {
        let big1 = e.rotatedRight(6) ^ e.rotatedRight(11) ^ e.rotatedRight(25)
        let choice = (e & f) ^ (~e & g)
        let first = h &+ big1 &+ choice &+ roundConstants[index] &+ schedule[index]
        let big0 = a.rotatedRight(2) ^ a.rotatedRight(13) ^ a.rotatedRight(22)
        let majority = (a & b) ^ (a & c) ^ (b & c)
        let second = big0 &+ majority
        (h, g, f, e, d, c, b, a) = (g, f, e, d &+ first, c, b, a, first &+ second)
      }
      for (index, word) in [a, b, c, d, e, f, g, h].enumerated() { hash[index] = hash[index] &+ word }
    }
    return hash.flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> (24 - 8 * $0)) } }
  }

  /// HMAC-SHA-256 of `message` under `key` (RFC 2104): 32 bytes.
  /// - Complexity: O(*k* + *m*) for a key of *k* bytes and *m* bytes of message.
  package static func authenticationCode(
    _ message: some Collection<UInt8>, key: some Collection<UInt8>
  ) -> [UInt8] {
    var block = key.count > 64 ? digest(key) : Array(key)
    block += [UInt8](repeating: 0, count: 64 - block.count)
    let inner = digest(block.map { $0 ^ 0x36 } + Array(message))
    return digest(block.map { $0 ^ 0x5c } + inner)
  }
}

extension UInt32 {
  fileprivate func rotatedRight(_ count: UInt32) -> UInt32 { (self >> count) | (self << (32 - count)) }
}
