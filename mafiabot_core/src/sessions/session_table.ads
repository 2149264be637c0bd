--  The session table of law L1: every piece of per-turn state lives in the
--  record of its (uid, channel, server) key, and nothing else holds any.
--  The table is bounded: past its capacity the least recently used session
--  is evicted (and logged on stderr), never a random one.
--
--  Sessions are kept in an open-addressing hash table (linear probing on
--  the key's FNV-1a hash, full keys compared, so two keys never share a
--  record) threaded by an intrusive recency list: about 200 bytes a
--  session besides its MoRAG memory, where the standard containers took
--  about 450.  The memory is the MoRAG's (Organs.Morag.Excerpts), kept
--  beside the session in the same entry and lent with it.

with Interfaces;
with Organs.Celtic_Cross;
with Organs.Drive_Box;
with Organs.Morag.Excerpts;
with Organs.Sets;

private with Ada.Finalization;

package Session_Table is

   type Session is record
      Turns     : Natural := 0;
      Reservoir : Organs.Drive_Box.Reservoir;
      Draws     : Organs.Celtic_Cross.Draw_State;
   end record;
   --  A session's own state; its memory is kept beside it (Open)

   type Session_Access is access all Session;

   type Memory_Access is access all Organs.Morag.Excerpts.Excerpt_Memory;

   function Fresh
     (Chosen : Organs.Sets.Organ_Set; Session_Key : String) return Session
   with Pre => Organs.Sets.Is_Complete (Chosen),
        Post => Fresh'Result.Turns = 0;
   --  A new session of Session_Key, as the Chosen organs make it: a
   --  function of the key alone

   type Table is tagged limited private;

   procedure Set_Capacity (Self : in out Table; Capacity : Positive);
   --  The most sessions kept at once (default 10,000)

   procedure Open
     (Self        : in out Table;
      Chosen      : Organs.Sets.Organ_Set;
      Session_Key : String;
      Result      : out Session_Access;
      Memory      : out Memory_Access)
   with Pre  => Organs.Sets.Is_Complete (Chosen),
        Post => Count (Self) <= Capacity (Self);
   --  The session of Session_Key and its memory, made fresh by the Chosen
   --  organs (an empty memory) if it is new, and now the most recently
   --  used.  Both stay valid until the next Open.

   procedure Look_Up
     (Self        : Table;
      Session_Key : String;
      Result      : out Session_Access;
      Memory      : out Memory_Access);
   --  The session of Session_Key and its memory if the table keeps it, else
   --  null for both; nothing is made, evicted or made recent.  Both stay
   --  valid until the next Open.

   function Count (Self : Table) return Natural;
   function Capacity (Self : Table) return Positive;

private

   type Key_Access is access String;

   type Entry_Record;
   type Entry_Access is access Entry_Record;

   type Entry_Record is record
      State  : aliased Session;
      Memory : aliased Organs.Morag.Excerpts.Excerpt_Memory;
      Key    : Key_Access;
      Hash  : Interfaces.Unsigned_64;
      Newer : Entry_Access;
      Older : Entry_Access;
      --  The recency list, most recent first
   end record;

   type Slot_Array is array (Natural range <>) of Entry_Access;
   type Slot_Array_Access is access Slot_Array;

   type Table is new Ada.Finalization.Limited_Controlled with record
      Limit  : Positive := 10_000;
      Slots  : Slot_Array_Access;
      --  A power of two in length, at most half full
      Count  : Natural := 0;
      Newest : Entry_Access;
      Oldest : Entry_Access;
   end record;

   overriding procedure Finalize (Self : in out Table);

end Session_Table;
