"""A small client of the W3C WebDriver protocol (https://www.w3.org/TR/webdriver2/), standard library only, for
driving Debian's chromium through its chromedriver: the dashboard's browser tests need a few commands, and no
package from PyPI (selenium pins newer dependencies than a mirror may have)."""

import base64
import contextlib
import json
import os
import socket
import subprocess
import time
import urllib.error
import urllib.request

# A W3C element reference is an object with this one member (WebDriver §12.1).
ELEMENT = "element-6066-11e4-a52e-4f735466cecf"


class WebDriverError(Exception):
    pass


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Driver:
    """chromedriver on a free loopback port; `session()` opens a headless Chromium."""

    def __init__(self, chromedriver="/usr/bin/chromedriver", log=None):
        self.port = free_port()
        self.process = subprocess.Popen(
            [chromedriver, f"--port={self.port}", "--allowed-ips=127.0.0.1"],
            stdout=log or subprocess.DEVNULL, stderr=subprocess.STDOUT)
        self.base = f"http://127.0.0.1:{self.port}"
        for _ in range(100):
            try:
                with urllib.request.urlopen(self.base + "/status", timeout=2) as answer:
                    if json.load(answer)["value"].get("ready"):
                        return
            except OSError:
                pass
            time.sleep(0.1)
        self.stop()
        raise WebDriverError("chromedriver did not start")

    def session(self, width=1280, height=800, binary="/usr/bin/chromium"):
        arguments = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     f"--window-size={width},{height}", "--no-first-run", "--disable-extensions"]
        capabilities = {"capabilities": {"alwaysMatch": {
            "browserName": "chrome", "goog:chromeOptions": {"binary": binary, "args": arguments},
            "goog:loggingPrefs": {"browser": "ALL"}}}}
        value = call(self.base, "POST", "/session", capabilities)
        return Session(self.base, value["sessionId"])

    @contextlib.contextmanager
    def window(self, width=1280, height=800):
        """A session that quits when the `with` block ends."""
        session = self.session(width, height)
        try:
            yield session
        finally:
            session.quit()

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()


def call(base, method, path, body=None):
    data = json.dumps(body if body is not None else {}).encode() if method == "POST" else None
    request = urllib.request.Request(base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return json.load(answer).get("value")
    except urllib.error.HTTPError as error:
        detail = json.loads(error.read() or b"{}").get("value", {})
        raise WebDriverError(f"{method} {path}: {detail.get('error')}: {detail.get('message', '')[:300]}") from None


class Session:
    """One browser: navigation, elements by `data-testid` or CSS, scripts, screenshots."""

    def __init__(self, base, session_id):
        self.base = f"{base}/session/{session_id}"

    def _call(self, method, path, body=None):
        return call(self.base, method, path, body)

    def quit(self):
        try:
            self._call("DELETE", "")
        except WebDriverError:
            pass

    def get(self, url):
        self._call("POST", "/url", {"url": url})

    @property
    def url(self):
        return self._call("GET", "/url")

    def script(self, source, *arguments):
        return self._call("POST", "/execute/sync", {"script": source, "args": list(arguments)})

    def async_script(self, source, *arguments):
        return self._call("POST", "/execute/async", {"script": source, "args": list(arguments)})

    def screenshot(self, path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as file:
            file.write(base64.b64decode(self._call("GET", "/screenshot")))

    def set_size(self, width, height):
        self._call("POST", "/window/rect", {"width": width, "height": height})

    def find_all(self, css):
        found = self._call("POST", "/elements", {"using": "css selector", "value": css})
        return [Element(self, item[ELEMENT]) for item in found]

    def by_test_id(self, test_id, extra=""):
        return self.find_all(f'[data-testid="{test_id}"]{extra}')

    def wait(self, find, what, timeout=10.0):
        """Polls `find` until it returns something truthy; fails naming `what`."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                found = find()
            except WebDriverError:
                found = None
            if found:
                return found
            if time.monotonic() > deadline:
                raise AssertionError(f"waited {timeout} s for {what}; page: {self.url}")
            time.sleep(0.05)

    def one(self, test_id, extra="", timeout=10.0):
        """The first element with `data-testid`, once it is displayed."""
        return self.wait(
            lambda: next((element for element in self.by_test_id(test_id, extra) if element.displayed), None),
            f'a displayed [data-testid="{test_id}"]{extra}', timeout)

    def keys(self, text):
        """Types into whatever has the focus (W3C key actions), e.g. Escape: '\\ue00c'."""
        actions = [{"type": "keyDown", "value": key} for key in text] + \
                  [{"type": "keyUp", "value": key} for key in text]
        self._call("POST", "/actions", {"actions": [{"type": "key", "id": "keyboard", "actions": actions}]})
        self._call("DELETE", "/actions")

    def cdp(self, command, params=None):
        """A Chrome DevTools Protocol command, through chromedriver's extension of WebDriver."""
        return self._call("POST", "/goog/cdp/execute", {"cmd": command, "params": params or {}})

    def alert_text(self):
        """The text of an open alert, or None."""
        try:
            return self._call("GET", "/alert/text")
        except WebDriverError:
            return None


class Element:
    def __init__(self, session, element_id):
        self.session = session
        self.path = f"/element/{element_id}"
        self.reference = {ELEMENT: element_id}

    def _call(self, method, suffix, body=None):
        return self.session._call(method, self.path + suffix, body)

    def click(self):
        self._call("POST", "/click")

    def type(self, text):
        self._call("POST", "/value", {"text": text})

    def clear(self):
        self._call("POST", "/clear")

    @property
    def text(self):
        return self._call("GET", "/text")

    @property
    def displayed(self):
        return self._call("GET", "/displayed")

    def attribute(self, name):
        return self._call("GET", f"/attribute/{name}")

    def property(self, name):
        return self._call("GET", f"/property/{name}")

    def find_all(self, css):
        found = self._call("POST", "/elements", {"using": "css selector", "value": css})
        return [Element(self.session, item[ELEMENT]) for item in found]

    def by_test_id(self, test_id):
        return self.find_all(f'[data-testid="{test_id}"]')
