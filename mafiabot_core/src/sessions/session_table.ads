--  The session table of law L1: every piece of per-turn state lives in the
--  record of its (uid, channel, server) key, and nothing else holds any.
--  The table is bounded: past its capacity the least recently used session
--  is evicted (and logged on stderr), never a random one.

with Organs;
with Organs.Celtic_Cross;
with Organs.Drive_Box;
with Organs.Morag;

private with Ada.Containers.Indefinite_Doubly_Linked_Lists;
private with Ada.Containers.Indefinite_Hashed_Maps;
private with Ada.Strings.Hash;

package Session_Table is

   type Session is record
      Turns     : Natural := 0;
      Reservoir : Organs.Drive_Box.Reservoir;
      Draws     : Organs.Celtic_Cross.Draw_State;
      Memory    : Organs.Morag.Memory;
   end record;

   type Session_Access is access all Session;

   type Table is tagged limited private;

   procedure Set_Capacity (Self : in out Table; Capacity : Positive);
   --  The most sessions kept at once (default 10,000)

   procedure Open
     (Self        : in out Table;
      Stub        : Organs.Fixture;
      Session_Key : String;
      Result      : out Session_Access);
   --  The session of Session_Key, made fresh if it is new, and now the most
   --  recently used.  Result stays valid until the next Open.

   function Count (Self : Table) return Natural;

private

   package Recency_Lists is new Ada.Containers.Indefinite_Doubly_Linked_Lists
     (String);

   type Entry_Record is record
      State  : Session_Access;
      Recent : Recency_Lists.Cursor;
      --  The key's place in the recency list, so a touch is O(1)
   end record;

   package Session_Maps is new Ada.Containers.Indefinite_Hashed_Maps
     (Key_Type        => String,
      Element_Type    => Entry_Record,
      Hash            => Ada.Strings.Hash,
      Equivalent_Keys => "=");

   type Table is tagged limited record
      Capacity : Positive := 10_000;
      Sessions : Session_Maps.Map;
      Recency  : Recency_Lists.List;
      --  Session keys, least recently used first
   end record;

end Session_Table;
