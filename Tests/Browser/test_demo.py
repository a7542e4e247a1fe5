"""The demo page in headless Chromium: Ana and Ben, each in a browser of their own, on a fresh server.

Run by scripts/browser-check.sh, which starts the server (CHECKMARK_URL) and keeps the screenshots
(BROWSER_ARTIFACTS). Every assertion is on the DOM: each of the sender's messages has checks with
data-status (sending, sent, delivered, read) and data-history (every status it showed, in order).
"""

import os
import re
import shutil
import time

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

URL = os.environ.get("CHECKMARK_URL", "http://127.0.0.1:8080")
ARTIFACTS = os.environ.get("BROWSER_ARTIFACTS", ".")
WAIT = 10  # seconds any expected change may take
EXACT_TIME = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}$")


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=820,900",
                     "--disable-gpu", "--lang=en-GB"):
        options.add_argument(argument)
    service = Service(executable_path=shutil.which("chromedriver") or "/usr/bin/chromedriver")
    return webdriver.Chrome(options=options, service=service)


@pytest.fixture
def people():
    drivers = {}
    try:
        for name in ("ana", "ben"):
            drivers[name] = browser()
            drivers[name].get(f"{URL}/demo?user={name}")
        for name, driver in drivers.items():
            wait_for(driver, lambda d: d.find_element(By.ID, "conn").get_attribute("data-state") == "ready",
                     f"{name}'s page to connect")
        yield drivers
    finally:
        for name, driver in drivers.items():
            driver.save_screenshot(os.path.join(ARTIFACTS, f"{name}-last.png"))
            driver.quit()


def wait_for(driver, condition, what, timeout=WAIT):
    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.05).until(condition)
    except Exception:
        error = driver.find_element(By.ID, "error").text
        raise AssertionError(f"timed out waiting for {what}" + (f" (page error: {error})" if error else ""))


# What one message shows, found by its text.
MESSAGE = """
const li = [...document.querySelectorAll('li.message')].find((li) => li.querySelector('.text').textContent === arguments[0]);
if (!li) return null;
const checks = li.querySelector('.checks');
return {id: li.dataset.id, status: checks && checks.dataset.status, history: checks && checks.dataset.history,
        dividerBefore: !!(li.previousElementSibling && li.previousElementSibling.classList.contains('divider'))};
"""


def message(driver, text):
    return driver.execute_script(MESSAGE, text)


def status(driver, text):
    shown = message(driver, text)
    return shown and shown["status"]


def send(driver, text):
    box = driver.find_element(By.ID, "text")
    box.send_keys(text)
    driver.find_element(By.CSS_SELECTOR, "#composer button").click()


def unread(driver):
    return int(driver.find_element(By.ID, "unread").get_attribute("data-count"))


def button_of(driver, text, css):
    shown = message(driver, text)
    return driver.find_element(By.CSS_SELECTOR, f'li.message[data-id="{shown["id"]}"] {css}')


def test_checks_follow_delivery_read_and_privacy(people):
    ana, ben = people["ana"], people["ben"]

    # 1. Ana sends; her check goes from one gray (the server stored it) to two gray (Ben's page got it
    #    and confirmed delivery) to blue (Ben's page showed it and marked it read), in that order.
    first = "Hello Ben ✓"
    send(ana, first)
    wait_for(ana, lambda d: status(d, first) == "read", "Ana's first message to turn blue")
    history = message(ana, first)["history"].split()
    assert history == ["sending", "sent", "delivered", "read"], history
    assert message(ben, first) is not None, "Ben's page does not show the message"
    wait_for(ben, lambda d: unread(d) == 0, "Ben's page to have read everything")

    # 2. "read by / delivered to" on Ana's message names Ben, with exact times.
    button_of(ana, first, ".show-receipts").click()
    read_by = wait_for(ana, lambda d: d.find_elements(By.CSS_SELECTOR, '#receipts li[data-kind="read"][data-user="ben"]'),
                       "the receipts to list Ben as a reader")
    assert EXACT_TIME.match(read_by[0].find_element(By.TAG_NAME, "time").text), read_by[0].text
    ana.save_screenshot(os.path.join(ARTIFACTS, "ana-read-by.png"))

    # 3. Ben turns read receipts off (a partial update of his user); Ana's next message is delivered
    #    and read by Ben's page, but her check must never turn blue.
    switch = ben.find_element(By.ID, "read-receipts")
    assert switch.is_selected()
    switch.click()
    wait_for(ben, lambda d: d.find_element(By.ID, "privacy-state").get_attribute("data-state") == "saved",
             "Ben's privacy setting to be saved")
    assert not ben.find_element(By.ID, "read-receipts").is_selected()
    second = "Are you there?"
    send(ana, second)
    wait_for(ana, lambda d: status(d, second) in ("delivered", "read"), "Ana's second message to show delivered")
    wait_for(ben, lambda d: message(d, second) is not None and unread(d) == 0, "Ben's page to read the second message")
    time.sleep(3)
    assert status(ana, second) == "delivered", message(ana, second)
    assert "read" not in message(ana, second)["history"].split()
    assert status(ana, first) == "read"
    # "read by / delivered to" now has Ben among those who have it, not among the readers.
    button_of(ana, second, ".show-receipts").click()
    delivered = wait_for(ana, lambda d: d.find_element(By.ID, "receipts").get_attribute("data-message-id") == message(d, second)["id"]
                         and d.find_elements(By.CSS_SELECTOR, '#receipts li[data-kind="delivered"][data-user="ben"]'),
                         "the receipts to list Ben as having the second message")
    assert EXACT_TIME.match(delivered[0].find_element(By.TAG_NAME, "time").text), delivered[0].text
    assert not ana.find_elements(By.CSS_SELECTOR, '#receipts li[data-kind="read"]')

    # 4. Ben marks Ana's first message unread: both of her messages count as unread on his page and
    #    the "unread messages" divider stands before the first; nothing reads them again by itself.
    button_of(ben, first, ".mark-unread").click()
    wait_for(ben, lambda d: unread(d) == 2, "Ben's unread count to be 2")
    assert message(ben, first)["dividerBefore"]
    time.sleep(1)
    assert unread(ben) == 2

    ana.save_screenshot(os.path.join(ARTIFACTS, "ana.png"))
    ben.save_screenshot(os.path.join(ARTIFACTS, "ben.png"))


def typing_shown(driver):
    return driver.find_element(By.ID, "typing").get_attribute("data-users")


def test_typing_shows_while_the_other_types_and_follows_their_switch(people):
    ana, ben = people["ana"], people["ben"]

    # 1. Ben types without sending: Ana's page says so; 2 s after his last key it stops by itself.
    ben.find_element(By.ID, "text").send_keys("Hel")
    wait_for(ana, lambda d: typing_shown(d) == "ben", "Ana's page to show Ben typing")
    assert "ben is typing" in ana.find_element(By.ID, "typing").text
    assert typing_shown(ben) == "", "nobody is shown their own typing"
    wait_for(ana, lambda d: typing_shown(d) == "", "Ben's typing to stop showing once he stops")

    # 2. Ben turns "show that I am typing" off: however much he types, Ana's page never shows it.
    switch = ben.find_element(By.ID, "typing-indicators")
    assert switch.is_selected()
    switch.click()
    wait_for(ben, lambda d: d.find_element(By.ID, "privacy-state").get_attribute("data-state") == "saved",
             "Ben's typing setting to be saved")
    box = ben.find_element(By.ID, "text")
    deadline = time.time() + 4
    while time.time() < deadline:
        box.send_keys("x")
        assert typing_shown(ana) == "", "Ana's page showed Ben typing with his switch off"
        time.sleep(0.2)
    ana.save_screenshot(os.path.join(ARTIFACTS, "ana-typing.png"))


# What the message with this id shows: its text, the "edited" mark, and whether it is shown deleted.
SHOWN = """
const li = document.querySelector('li.message[data-id="' + CSS.escape(arguments[0]) + '"]');
return li && {text: li.querySelector('.text').textContent, edited: !li.querySelector('.edited').hidden,
              deleted: li.classList.contains('deleted')};
"""


def shown(driver, message_id):
    return driver.execute_script(SHOWN, message_id)


def test_an_edit_and_a_delete_of_ones_own_message_reach_the_other_page(people):
    ana, ben = people["ana"], people["ben"]
    send(ana, "Mete at noon")
    wait_for(ben, lambda d: message(d, "Mete at noon"), "Ben's page to show Ana's message")
    message_id = message(ana, "Mete at noon")["id"]
    mine = f'li.message[data-id="{message_id}"]'
    assert not ben.find_elements(By.CSS_SELECTOR, f"{mine} .edit-message"), "only the author is offered an edit"

    # 1. Ana edits her message: Ben's page shows the new text, marked edited (message.updated).
    ana.find_element(By.CSS_SELECTOR, f"{mine} .edit-message").click()
    box = ana.find_element(By.CSS_SELECTOR, f"{mine} .edit-text")
    box.clear()
    box.send_keys("Meet at noon")
    ana.find_element(By.CSS_SELECTOR, f"{mine} .save-edit").click()
    edited = {"text": "Meet at noon", "edited": True, "deleted": False}
    wait_for(ben, lambda d: shown(d, message_id) == edited, "Ben's page to show Ana's edit")
    wait_for(ana, lambda d: shown(d, message_id) == edited, "Ana's page to show her edit")

    # 2. Ana deletes it: both pages show it deleted (message.deleted), in its place.
    ana.find_element(By.CSS_SELECTOR, f"{mine} .delete-message").click()
    deleted = {"text": "This message was deleted.", "edited": False, "deleted": True}
    wait_for(ben, lambda d: shown(d, message_id) == deleted, "Ben's page to show the message deleted")
    wait_for(ana, lambda d: shown(d, message_id) == deleted, "Ana's page to show the message deleted")
    ben.save_screenshot(os.path.join(ARTIFACTS, "ben-edit-delete.png"))


def reaction_counts(driver, message_id):
    return driver.find_element(By.CSS_SELECTOR, f'li.message[data-id="{message_id}"] .reactions').get_attribute("data-counts")


def test_a_like_shows_on_both_pages_and_can_be_taken_back(people):
    ana, ben = people["ana"], people["ben"]
    send(ana, "Lunch?")
    wait_for(ben, lambda d: message(d, "Lunch?"), "Ben's page to show Ana's message")
    message_id = message(ana, "Lunch?")["id"]
    like = f'li.message[data-id="{message_id}"] .react-message'

    # 1. Ben likes it: both pages count one like (reaction.new), and Ben's button shows it is his.
    ben.find_element(By.CSS_SELECTOR, like).click()
    wait_for(ana, lambda d: reaction_counts(d, message_id) == "like:1", "Ana's page to count Ben's like")
    wait_for(ben, lambda d: d.find_element(By.CSS_SELECTOR, like).get_attribute("aria-pressed") == "true", "Ben's like to show as his")
    assert ana.find_element(By.CSS_SELECTOR, like).get_attribute("aria-pressed") == "false", "Ana did not like it"

    # 2. Ben takes it back (reaction.deleted): the count goes on both pages.
    ben.find_element(By.CSS_SELECTOR, like).click()
    wait_for(ana, lambda d: reaction_counts(d, message_id) == "", "Ana's page to drop Ben's like")
    wait_for(ben, lambda d: d.find_element(By.CSS_SELECTOR, like).get_attribute("aria-pressed") == "false", "Ben's like to be gone")


def test_without_a_user_the_page_offers_the_people():
    driver = browser()
    try:
        driver.get(f"{URL}/demo")
        links = driver.find_elements(By.CSS_SELECTOR, "#picker a")
        assert [link.get_attribute("href").split("?")[1] for link in links] == ["user=ana", "user=ben", "user=cy"]
        assert driver.find_element(By.ID, "picker").is_displayed()
    finally:
        driver.quit()
