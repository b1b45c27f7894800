"""A person solves one task per domain through the solve screen alone: the tool search (ctrl+f),
the composer's fields (clicked and typed into), the result viewer (v on a call, a value taken
with i into the next call), F5 and ctrl+s. Each attempt must pass."""

from __future__ import annotations

from typing import Any

from appcheck import forget_unfinished, until_settled
from textual import events
from textual.widgets import Input, Select

from ebench.app.app import EBenchApp
from ebench.app.screens.result_view import ResultScreen
from ebench.app.screens.solve import SolveScreen
from ebench.app.widgets.composer import CallComposer
from ebench.app.widgets.trace import CallTrace, CallView
from ebench.tasks.suite import load_suite

SIZE = (160, 50)


def the_task(task_id: str):
    task = load_suite(ids=[task_id]).tasks[0]
    forget_unfinished(task)
    return task


async def ready(pilot) -> SolveScreen:
    screen = pilot.app.screen
    assert isinstance(screen, SolveScreen)
    await until_settled(pilot, lambda: screen.trial is not None and screen.last_diff is not None)
    return screen


async def choose_tool(pilot, screen: SolveScreen, name: str) -> None:
    """ctrl+f from wherever the focus is, type the exact name, enter."""
    await pilot.press("ctrl+f")
    await until_settled(pilot, lambda: screen.focused is not None and screen.focused.id == "catalog-search")
    search = screen.focused
    assert isinstance(search, Input)
    search.value = ""
    search.post_message(events.Paste(name))  # the exact name, pasted
    await until_settled(pilot, lambda: search.value == name)
    composer = screen.query_one(CallComposer)
    form = composer.query_one("#composer-form")
    fields_before = list(form.children)
    await pilot.press("enter")
    # the form is built anew (the same tool again too) and its first field has the focus: typing starts there
    await until_settled(pilot, lambda: composer.tool is not None and composer.tool.name == name and list(form.children) != fields_before)
    first = next(iter(composer.values))
    await until_settled(pilot, lambda: screen.focused is composer.field(first))


async def fill(pilot, screen: SolveScreen, name: str, text: str) -> None:
    """Click the field and type its text (replacing what it held); a choice list is opened and
    walked with the arrow keys to the choice."""
    field = screen.query_one(CallComposer).field(name)
    field.scroll_visible(animate=False, immediate=True)  # a person scrolls the form to it first
    form = screen.query_one("#composer-form")
    await until_settled(pilot, lambda: form.region.contains_region(field.region), what=f"{name} scrolled into view")
    if isinstance(field, Select):
        await pilot.click(field)
        await until_settled(pilot, lambda: field.expanded)
        menu = screen.focused
        for _ in range(50):
            option = menu.highlighted_option
            if option is not None and str(option.prompt) == text:
                break
            await pilot.press("down")
        await pilot.press("enter")
        await until_settled(pilot, lambda: not field.expanded)
        assert field.selection == text
        return
    assert isinstance(field, Input)
    await pilot.click(field)
    await until_settled(pilot, lambda: screen.focused is field)
    await pilot.press("end")
    while field.value:
        await pilot.press("backspace")
    if len(text) > 12:  # long texts (lists of ids) are pasted, as a person would
        field.post_message(events.Paste(text))
        await until_settled(pilot, lambda: field.value == text)
    else:
        await pilot.press(*text)
    assert field.value == text


async def run(pilot, screen: SolveScreen) -> Any:
    calls = screen.trial.tool_calls
    await pilot.press("f5")
    await until_settled(pilot, lambda: screen.trial.tool_calls == calls + 1 and not screen.busy)
    call = screen.trial.history[-1]
    assert call.ok, call.result
    return call.result


async def take_from_result(pilot, screen: SolveScreen, tool: str, search: str, value: Any) -> None:
    """Focus the latest call of `tool` in the trace, open its result (v), search for `search` (/),
    take the highlighted value (i) into the composer's field, which must then hold `value`."""
    await pilot.press("f4")
    trace = screen.query_one(CallTrace)
    call = next(c for c in reversed(screen.trial.history) if c.tool == tool)
    view = trace.view(str(call.id))
    assert isinstance(view, CallView)
    await until_settled(pilot, lambda: isinstance(screen.focused, CallView))  # F4 lands on the newest call
    while screen.focused is not view:  # back through the trace's calls, as a person would
        await pilot.press("shift+tab")
    await pilot.press("v")
    await until_settled(pilot, lambda: isinstance(pilot.app.screen, ResultScreen))
    viewer = pilot.app.screen
    assert isinstance(viewer, ResultScreen)
    await pilot.press("slash", *search, "enter")
    for _ in range(20):  # n: the next match, until the highlighted value is the one wanted
        if viewer.chosen_value() == value:
            break
        await pilot.press("n")
    await pilot.press("i")
    await until_settled(pilot, lambda: pilot.app.screen is screen)
    values = screen.query_one(CallComposer).values
    assert any(text == str(value) or text.endswith(f", {value}]") for text in values.values()), values  # set, or appended to a list


async def submit(pilot, screen: SolveScreen) -> None:
    await pilot.press("ctrl+s")
    await until_settled(pilot, lambda: screen.summary is not None)
    assert screen.summary.passed, screen.query_one("#task").status


async def test_moba_a_room_then_invitations_with_the_room_id_taken_from_its_result():
    task = the_task("moba-0023")  # create a brawl room, invite two friends
    friends = [step.args["player_id"] for step in task.reference_solution[1:]]
    async with EBenchApp(lambda: SolveScreen(task)).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await choose_tool(pilot, screen, "create_room")
        await fill(pilot, screen, "name", "Climb Together")
        await fill(pilot, screen, "mode", "brawl")
        room = (await run(pilot, screen))["room_id"]
        for friend in friends:
            await choose_tool(pilot, screen, "invite_to_room")
            await take_from_result(pilot, screen, "create_room", "room_id", room)
            await fill(pilot, screen, "player_id", str(friend))
            await run(pilot, screen)
        await submit(pilot, screen)


async def test_music_favourites_found_in_a_search_result_table():
    task = the_task("music-0020")  # favourite the Rock songs of 2015 that run 3:50 or longer
    wanted = [step.args["song_id"] for step in task.reference_solution]
    async with EBenchApp(lambda: SolveScreen(task)).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        await choose_tool(pilot, screen, "search_songs")
        await fill(pilot, screen, "genre", "Rock")
        await fill(pilot, screen, "released_after", "2015-01-01")
        await fill(pilot, screen, "released_before", "2015-12-31")
        await fill(pilot, screen, "min_duration_sec", "230")
        found = await run(pilot, screen)
        listed = {song["song_id"] for song in found["items"]}
        for song in wanted:
            await choose_tool(pilot, screen, "favourite_song")
            if song in listed:
                await take_from_result(pilot, screen, "search_songs", str(song), song)
            else:
                await fill(pilot, screen, "song_id", str(song))
            await run(pilot, screen)
        assert listed & set(wanted), "no value was taken from the table"
        await submit(pilot, screen)


async def test_meeting_participants_collected_from_a_result_table():
    task = the_task("meeting-0003")  # two OKR reviews, each with a team's members
    async with EBenchApp(lambda: SolveScreen(task)).run_test(size=SIZE) as pilot:
        screen = await ready(pilot)
        for step in task.reference_solution:
            args = step.args
            first, *rest = args["participant_ids"]
            await choose_tool(pilot, screen, "get_employee")
            await fill(pilot, screen, "employee_id", str(first))
            await run(pilot, screen)
            await choose_tool(pilot, screen, "create_meeting")
            for name in ("title", "start", "end"):
                await fill(pilot, screen, name, args[name])
            await fill(pilot, screen, "participant_ids", ", ".join(str(i) for i in rest))
            await take_from_result(pilot, screen, "get_employee", "employee_id", first)  # appended to the list
            await run(pilot, screen)
        await submit(pilot, screen)
