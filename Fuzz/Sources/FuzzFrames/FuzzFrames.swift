import CheckmarkWebSocket
import FuzzSupport
import NIOCore

/// libFuzzer entry point: the first byte picks the role, compression and chunking; the rest is fed to
/// a ``WebSocketConnection`` as received bytes. Any crash or hang is a bug in the codec.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFrames(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let control = bytes[0]
    let role: WebSocketRole = control & 1 == 0 ? .server : .client
    let compression: PerMessageDeflateParameters? = control & 2 == 0 ? nil
        : PerMessageDeflateParameters(serverNoContextTakeover: control & 4 != 0, clientNoContextTakeover: control & 8 != 0)
    let chunk = Int(control >> 4) + 1
    var connection = WebSocketConnection(
        role: role, limits: WebSocketLimits(maxFrameSize: 1 << 16, maxMessageSize: 1 << 18, maxFragmentsPerMessage: 64),
        compression: compression, maskingKeys: { WebSocketMaskingKey(0x01020304) })
    var offset = 1
    while offset < size {
        let end = min(offset + chunk, size)
        connection.receive(ByteBuffer(bytes: bytes[offset..<end]))
        while let event = connection.nextEvent() {
            if case .text(let text) = event { connection.sendText(text) }
            if case .binary(let binary) = event { connection.sendBinary(binary) }
        }
        _ = connection.takeOutbound()
        offset = end
    }
    return 0
}

@_cdecl("FuzzFrames_main")
public func fuzzFramesMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv) { fuzzFrames($0, $1) }
}
