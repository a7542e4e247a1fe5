"""The demo page in headless Chromium: Ivy and Leo, each in a browser of their own, on a fresh server.

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
        for name in ("ivy", "leo"):
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
    ivy, leo = people["ivy"], people["leo"]

    # 1. Ivy sends; her check goes from one gray (the server stored it) to two gray (Leo's page got it
    #    and confirmed delivery) to blue (Leo's page showed it and marked it read), in that order.
    first = "Hello Leo ✓"
    send(ivy, first)
    wait_for(ivy, lambda d: status(d, first) == "read", "Ivy's first message to turn blue")
    history = message(ivy, first)["history"].split()
    assert history == ["sending", "sent", "delivered", "read"], history
    assert message(leo, first) is not None, "Leo's page does not show the message"
    wait_for(leo, lambda d: unread(d) == 0, "Leo's page to have read everything")

    # 2. "read by / delivered to" on Ivy's message names Leo, with exact times.
    button_of(ivy, first, ".show-receipts").click()
    read_by = wait_for(ivy, lambda d: d.find_elements(By.CSS_SELECTOR, '#receipts li[data-kind="read"][data-user="leo"]'),
                       "the receipts to list Leo as a reader")
    assert EXACT_TIME.match(read_by[0].find_element(By.TAG_NAME, "time").text), read_by[0].text
    ivy.save_screenshot(os.path.join(ARTIFACTS, "ivy-read-by.png"))

    # 3. Leo turns read receipts off (a partial update of his user); Ivy's next message is delivered
    #    and read by Leo's page, but her check must never turn blue.
    switch = leo.find_element(By.ID, "read-receipts")
    assert switch.is_selected()
    switch.click()
    wait_for(leo, lambda d: d.find_element(By.ID, "privacy-state").get_attribute("data-state") == "saved",
             "Leo's privacy setting to be saved")
    assert not leo.find_element(By.ID, "read-receipts").is_selected()
    # Ivy's page says why her checks will stop at two gray.
    wait_for(ivy, lambda d: d.find_element(By.ID, "others-privacy").get_attribute("data-off") == "leo:read",
             "Ivy's page to say that Leo has read receipts off")
    assert "Leo has read receipts off" in ivy.find_element(By.ID, "others-privacy").text
    second = "Are you there?"
    send(ivy, second)
    wait_for(ivy, lambda d: status(d, second) in ("delivered", "read"), "Ivy's second message to show delivered")
    wait_for(leo, lambda d: message(d, second) is not None and unread(d) == 0, "Leo's page to read the second message")
    time.sleep(3)
    assert status(ivy, second) == "delivered", message(ivy, second)
    assert "read" not in message(ivy, second)["history"].split()
    assert status(ivy, first) == "read"
    # "read by / delivered to" now has Leo among those who have it, not among the readers.
    button_of(ivy, second, ".show-receipts").click()
    delivered = wait_for(ivy, lambda d: d.find_element(By.ID, "receipts").get_attribute("data-message-id") == message(d, second)["id"]
                         and d.find_elements(By.CSS_SELECTOR, '#receipts li[data-kind="delivered"][data-user="leo"]'),
                         "the receipts to list Leo as having the second message")
    assert EXACT_TIME.match(delivered[0].find_element(By.TAG_NAME, "time").text), delivered[0].text
    assert not ivy.find_elements(By.CSS_SELECTOR, '#receipts li[data-kind="read"]')

    # 4. Leo marks Ivy's first message unread: both of her messages count as unread on his page and
    #    the "unread messages" divider stands before the first; nothing reads them again by itself.
    button_of(leo, first, ".mark-unread").click()
    wait_for(leo, lambda d: unread(d) == 2, "Leo's unread count to be 2")
    assert message(leo, first)["dividerBefore"]
    time.sleep(1)
    assert unread(leo) == 2

    ivy.save_screenshot(os.path.join(ARTIFACTS, "ivy.png"))
    leo.save_screenshot(os.path.join(ARTIFACTS, "leo.png"))


def typing_shown(driver):
    return driver.find_element(By.ID, "typing").get_attribute("data-users")


def test_typing_shows_while_the_other_types_and_follows_their_switch(people):
    ivy, leo = people["ivy"], people["leo"]

    # 1. Leo types without sending: Ivy's page says so; 2 s after his last key it stops by itself.
    leo.find_element(By.ID, "text").send_keys("Hel")
    wait_for(ivy, lambda d: typing_shown(d) == "leo", "Ivy's page to show Leo typing")
    assert "leo is typing" in ivy.find_element(By.ID, "typing").text
    assert typing_shown(leo) == "", "nobody is shown their own typing"
    wait_for(ivy, lambda d: typing_shown(d) == "", "Leo's typing to stop showing once he stops")

    # 2. Leo turns "show that I am typing" off: however much he types, Ivy's page never shows it.
    switch = leo.find_element(By.ID, "typing-indicators")
    assert switch.is_selected()
    switch.click()
    wait_for(leo, lambda d: d.find_element(By.ID, "privacy-state").get_attribute("data-state") == "saved",
             "Leo's typing setting to be saved")
    box = leo.find_element(By.ID, "text")
    deadline = time.time() + 4
    while time.time() < deadline:
        box.send_keys("x")
        assert typing_shown(ivy) == "", "Ivy's page showed Leo typing with his switch off"
        time.sleep(0.2)
    ivy.save_screenshot(os.path.join(ARTIFACTS, "ivy-typing.png"))


# What the message with this id shows: its text, the "edited" mark, and whether it is shown deleted.
SHOWN = """
const li = document.querySelector('li.message[data-id="' + CSS.escape(arguments[0]) + '"]');
return li && {text: li.querySelector('.text').textContent, edited: !li.querySelector('.edited').hidden,
              deleted: li.classList.contains('deleted')};
"""


def shown(driver, message_id):
    return driver.execute_script(SHOWN, message_id)


def test_an_edit_and_a_delete_of_ones_own_message_reach_the_other_page(people):
    ivy, leo = people["ivy"], people["leo"]
    send(ivy, "Mete at noon")
    wait_for(leo, lambda d: message(d, "Mete at noon"), "Leo's page to show Ivy's message")
    message_id = message(ivy, "Mete at noon")["id"]
    mine = f'li.message[data-id="{message_id}"]'
    assert not leo.find_elements(By.CSS_SELECTOR, f"{mine} .edit-message"), "only the author is offered an edit"

    # 1. Ivy edits her message: Leo's page shows the new text, marked edited (message.updated).
    ivy.find_element(By.CSS_SELECTOR, f"{mine} .edit-message").click()
    box = ivy.find_element(By.CSS_SELECTOR, f"{mine} .edit-text")
    box.clear()
    box.send_keys("Meet at noon")
    ivy.find_element(By.CSS_SELECTOR, f"{mine} .save-edit").click()
    edited = {"text": "Meet at noon", "edited": True, "deleted": False}
    wait_for(leo, lambda d: shown(d, message_id) == edited, "Leo's page to show Ivy's edit")
    wait_for(ivy, lambda d: shown(d, message_id) == edited, "Ivy's page to show her edit")

    # 2. Ivy deletes it: both pages show it deleted (message.deleted), in its place.
    ivy.find_element(By.CSS_SELECTOR, f"{mine} .delete-message").click()
    deleted = {"text": "This message was deleted.", "edited": False, "deleted": True}
    wait_for(leo, lambda d: shown(d, message_id) == deleted, "Leo's page to show the message deleted")
    wait_for(ivy, lambda d: shown(d, message_id) == deleted, "Ivy's page to show the message deleted")
    leo.save_screenshot(os.path.join(ARTIFACTS, "leo-edit-delete.png"))


def reaction_counts(driver, message_id):
    return driver.find_element(By.CSS_SELECTOR, f'li.message[data-id="{message_id}"] .reactions').get_attribute("data-counts")


def test_a_like_shows_on_both_pages_and_can_be_taken_back(people):
    ivy, leo = people["ivy"], people["leo"]
    send(ivy, "Lunch?")
    wait_for(leo, lambda d: message(d, "Lunch?"), "Leo's page to show Ivy's message")
    message_id = message(ivy, "Lunch?")["id"]
    like = f'li.message[data-id="{message_id}"] .react-message'

    # 1. Leo likes it: both pages count one like (reaction.new), and Leo's button shows it is his.
    leo.find_element(By.CSS_SELECTOR, like).click()
    wait_for(ivy, lambda d: reaction_counts(d, message_id) == "like:1", "Ivy's page to count Leo's like")
    wait_for(leo, lambda d: d.find_element(By.CSS_SELECTOR, like).get_attribute("aria-pressed") == "true", "Leo's like to show as his")
    assert ivy.find_element(By.CSS_SELECTOR, like).get_attribute("aria-pressed") == "false", "Ivy did not like it"

    # 2. Leo takes it back (reaction.deleted): the count goes on both pages.
    leo.find_element(By.CSS_SELECTOR, like).click()
    wait_for(ivy, lambda d: reaction_counts(d, message_id) == "", "Ivy's page to drop Leo's like")
    wait_for(leo, lambda d: d.find_element(By.CSS_SELECTOR, like).get_attribute("aria-pressed") == "false", "Leo's like to be gone")


def test_a_message_sent_before_the_other_ever_opened_the_page_goes_blue_when_they_read_it():
    # Mia has never opened her page on this server: she is a member from the channel's first page
    # load on, so Ivy's message reaches her when she comes, and Ivy sees it delivered and read.
    drivers = {}
    try:
        drivers["ivy"] = browser()
        drivers["ivy"].get(f"{URL}/demo?user=ivy")
        ivy = drivers["ivy"]
        wait_for(ivy, lambda d: d.find_element(By.ID, "conn").get_attribute("data-state") == "ready", "Ivy's page to connect")
        early = "Sent before Mia ever came"
        send(ivy, early)
        wait_for(ivy, lambda d: status(d, early) == "sent", "Ivy's early message to be stored")
        time.sleep(1)
        assert status(ivy, early) == "sent", "nobody else has it yet"
        drivers["mia"] = browser()
        drivers["mia"].get(f"{URL}/demo?user=mia")
        wait_for(drivers["mia"], lambda d: message(d, early) is not None, "Mia's page to show Ivy's early message")
        wait_for(ivy, lambda d: status(d, early) == "read", "Ivy's early message to turn blue once Mia read it")
        assert message(ivy, early)["history"].split()[-2:] in (["delivered", "read"], ["sent", "read"])
        ivy.save_screenshot(os.path.join(ARTIFACTS, "ivy-before-mia.png"))
    finally:
        for driver in drivers.values():
            driver.quit()


def test_without_a_user_the_page_offers_the_people():
    driver = browser()
    try:
        driver.get(f"{URL}/demo")
        links = driver.find_elements(By.CSS_SELECTOR, "#picker a")
        assert [link.get_attribute("href").split("?")[1] for link in links] == ["user=ivy", "user=leo", "user=mia"]
        assert driver.find_element(By.ID, "picker").is_displayed()
    finally:
        driver.quit()
