with Ada.Unchecked_Deallocation;
with Body_Log;
with Session_Keys;

package body Session_Table is

   use type Interfaces.Unsigned_64;

   Initial_Slots : constant := 1024;

   procedure Free is new Ada.Unchecked_Deallocation (String, Key_Access);
   procedure Free is new Ada.Unchecked_Deallocation
     (Entry_Record, Entry_Access);
   procedure Free is new Ada.Unchecked_Deallocation
     (Slot_Array, Slot_Array_Access);

   function Count (Self : Table) return Natural is (Self.Count);
   function Capacity (Self : Table) return Positive is (Self.Limit);

   function Fresh
     (Chosen : Organs.Sets.Organ_Set; Session_Key : String) return Session is
     ((Turns     => 0,
       Reservoir => Chosen.Drive_Box.Fresh (Session_Key),
       Draws     => Chosen.Celtic_Cross.Shuffled_For (Session_Key)));

   procedure Set_Capacity (Self : in out Table; Capacity : Positive) is
   begin
      Self.Limit := Capacity;
   end Set_Capacity;

   function Home (Slots : Slot_Array; Hash : Interfaces.Unsigned_64)
     return Natural is
     (Natural (Hash and Interfaces.Unsigned_64 (Slots'Length - 1)));
   --  Slots'Length is a power of two

   function Next (Slots : Slot_Array; Index : Natural) return Natural is
     ((Index + 1) mod Slots'Length);

   --  Where Key is, or the free slot where it would go.
   function Find
     (Slots : Slot_Array; Key : String; Hash : Interfaces.Unsigned_64)
      return Natural
   is
      Index : Natural := Home (Slots, Hash);
   begin
      --  The table is never more than half full, so a free slot ends the
      --  probe.
      while Slots (Index) /= null
        and then (Slots (Index).Hash /= Hash or else Slots (Index).Key.all /= Key)
      loop
         Index := Next (Slots, Index);
      end loop;
      return Index;
   end Find;

   procedure Grow (Self : in out Table) is
      Old : Slot_Array_Access := Self.Slots;
   begin
      Self.Slots := new Slot_Array'(0 .. 2 * Old'Length - 1 => null);
      for Item of Old.all loop
         if Item /= null then
            Self.Slots (Find (Self.Slots.all, Item.Key.all, Item.Hash)) := Item;
         end if;
      end loop;
      Free (Old);
   end Grow;

   --  Empty a slot of a linear-probing table without tombstones: later
   --  entries of the same probe run move back into the gap.
   procedure Vacate (Slots : in out Slot_Array; Index : Natural) is
      Gap   : Natural := Index;
      Probe : Natural := Next (Slots, Index);
   begin
      Slots (Gap) := null;
      while Slots (Probe) /= null loop
         declare
            Wanted : constant Natural := Home (Slots, Slots (Probe).Hash);
            --  Whether Wanted lies cyclically in (Gap, Probe]: then the
            --  entry at Probe is still reachable from its home and stays.
            Stays  : constant Boolean :=
              (if Gap <= Probe then Wanted > Gap and then Wanted <= Probe
               else Wanted > Gap or else Wanted <= Probe);
         begin
            if not Stays then
               Slots (Gap) := Slots (Probe);
               Slots (Probe) := null;
               Gap := Probe;
            end if;
         end;
         Probe := Next (Slots, Probe);
      end loop;
   end Vacate;

   procedure Unlink (Self : in out Table; Item : Entry_Access) is
   begin
      if Item.Newer = null then
         Self.Newest := Item.Older;
      else
         Item.Newer.Older := Item.Older;
      end if;
      if Item.Older = null then
         Self.Oldest := Item.Newer;
      else
         Item.Older.Newer := Item.Newer;
      end if;
      Item.Newer := null;
      Item.Older := null;
   end Unlink;

   procedure Push_Newest (Self : in out Table; Item : Entry_Access) is
   begin
      Item.Older := Self.Newest;
      Item.Newer := null;
      if Self.Newest /= null then
         Self.Newest.Newer := Item;
      end if;
      Self.Newest := Item;
      if Self.Oldest = null then
         Self.Oldest := Item;
      end if;
   end Push_Newest;

   procedure Evict_Least_Recent (Self : in out Table) is
      Victim : Entry_Access := Self.Oldest;
   begin
      Body_Log.Info
        ("session table full (" & Self.Limit'Image
         & " ): evicting the least recently used session after"
         & Victim.State.Turns'Image & " turns");
      Vacate (Self.Slots.all, Find (Self.Slots.all, Victim.Key.all, Victim.Hash));
      Unlink (Self, Victim);
      Free (Victim.Key);
      Free (Victim);
      Self.Count := Self.Count - 1;
   end Evict_Least_Recent;

   procedure Open
     (Self        : in out Table;
      Chosen      : Organs.Sets.Organ_Set;
      Session_Key : String;
      Result      : out Session_Access;
      Memory      : out Memory_Access)
   is
      Hash  : constant Interfaces.Unsigned_64 :=
        Session_Keys.Hash64 (Session_Key);
      Index : Natural;
   begin
      if Self.Slots = null then
         Self.Slots := new Slot_Array'(0 .. Initial_Slots - 1 => null);
      end if;
      Index := Find (Self.Slots.all, Session_Key, Hash);
      if Self.Slots (Index) /= null then
         declare
            Found : constant Entry_Access := Self.Slots (Index);
         begin
            Unlink (Self, Found);
            Push_Newest (Self, Found);
            Result := Found.State'Access;
            Memory := Found.Memory'Access;
         end;
         return;
      end if;

      if Self.Count >= Self.Limit then
         Evict_Least_Recent (Self);
      end if;
      if 2 * (Self.Count + 1) > Self.Slots'Length then
         Grow (Self);
      end if;
      declare
         Made : constant Entry_Access := new Entry_Record'
           (State  => Fresh (Chosen, Session_Key),
            Memory => <>,
            Key    => new String'(Session_Key),
            Hash   => Hash,
            Newer  => null,
            Older  => null);
      begin
         --  Eviction or growth may have moved the free slot.
         Self.Slots (Find (Self.Slots.all, Session_Key, Hash)) := Made;
         Push_Newest (Self, Made);
         Self.Count := Self.Count + 1;
         Result := Made.State'Access;
         Memory := Made.Memory'Access;
      end;
   end Open;

   procedure Look_Up
     (Self        : Table;
      Session_Key : String;
      Result      : out Session_Access;
      Memory      : out Memory_Access)
   is
      Found : Entry_Access := null;
   begin
      if Self.Slots /= null then
         Found := Self.Slots
           (Find (Self.Slots.all, Session_Key, Session_Keys.Hash64 (Session_Key)));
      end if;
      Result := (if Found = null then null else Found.State'Access);
      Memory := (if Found = null then null else Found.Memory'Access);
   end Look_Up;

   overriding procedure Finalize (Self : in out Table) is
      Item : Entry_Access := Self.Oldest;
   begin
      while Item /= null loop
         declare
            Gone : Entry_Access := Item;
         begin
            Item := Item.Newer;
            Free (Gone.Key);
            Free (Gone);
         end;
      end loop;
      Free (Self.Slots);
   end Finalize;

end Session_Table;
