"""Stream-style JWTs (HS256) for the cluster scripts: a server token (`{"server": true}`) or a
user's (`{"user_id": ...}`), signed with the api secret."""
import base64
import hashlib
import hmac
import json


def token(secret, claims):
    def b64(data):
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()
    head = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = b64(json.dumps(claims).encode())
    signature = hmac.new(secret.encode(), f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{b64(signature)}"
